// Package mongo stores pixgate's aggregates in MongoDB (driver v2): transactions, withdrawals,
// the webhook outbox, client accounts and their credentials. It implements
// ports.TransactionRepository, ports.WithdrawalRepository, ports.Outbox,
// ports.AccountRepository and ports.Pinger, and must not know HTTP, the use cases or any other
// adapter. Open connects, pings and creates the indexes; Store hands out the repositories.
//
// It works on a standalone server, a replica set and a sharded cluster, and never needs a
// multi-document transaction: every guarantee below rests on single-document atomicity and
// unique indexes. Writes use majority write concern and reads majority read concern.
//
// # Documents
//
// One aggregate per document. Collections:
//
//   - transactions: _id (the transaction id), accountId, status, createdAt, updatedAt (date of
//     the last status), history, the order (amount, customer, items...), the PIX data and the
//     payment fields, version, idem (see below), search (lower-cased copies the list filters
//     match) and the outbox fields.
//   - withdrawals: the same shape for withdrawals, plus seq (see Reservations).
//   - accounts: _id, name, status, scopes, webhook secrets, createdAt, version.
//   - credentials: _id (the client id, unique across accounts), accountId, secretHash,
//     createdAt, revokedAt.
//
// Money is int64 centavos; times are BSON dates (milliseconds, what the domain keeps).
//
// # The outbox lives in the resource's document
//
// The events a status change raises go into an "outbox" array of the transaction's (or
// withdrawal's) own document, in the same updateOne as the change itself: a status change and
// its notification are one single-document write, so they can never be separated, with or
// without transactions. Each element holds the event (id, type, time, webhook URL, a snapshot
// of the resource as it was) and its delivery state: status (pending, delivered, failed),
// nextAttemptAt, attempts, and the lease (owner, leaseUntil).
//
// Two fields beside the array serve the dispatchers:
//
//   - outboxDue: the earliest moment one of the document's pending deliveries may be claimed
//     (its next attempt, or the end of the lease someone holds on it); absent when none is
//     pending. Claim finds work with {outboxDue: {$lte: now}} sorted by outboxDue, through an
//     index on that single, non-array field: documents whose deliveries are all done drop out
//     of the index range for good.
//   - outboxRev: a revision counter of the outbox. Every outbox write is a conditional
//     updateOne({_id, outboxRev: r}, {$set: {"outbox.<i>.owner": ..., "outbox.<i>.leaseUntil":
//     ..., outboxDue: ...}, $inc: {outboxRev: 1}}) that changes array elements by position; a
//     dispatcher working from an older read matches nothing and knows another got in first.
//     That is how a lease is taken by exactly one owner, recorded only by its holder, and
//     released.
//
// Status changes never touch the existing elements: they $set the aggregate's fields, $push
// new deliveries, lower outboxDue with $min, and move outboxRev (so that a dispatcher that read
// the outbox before cannot write back an outboxDue that ignores the new deliveries). Claims
// never touch the aggregate's fields or its version. The two kinds of writers therefore never
// undo each other and do not make each other retry. Other indexes: outbox.id (multikey) finds
// the event RecordAttempt names, outbox.owner the leases Release gives back.
//
// # Version checks
//
// Every status change is closure-shaped: read the document, apply fn to the aggregate, then
// updateOne({_id, version: v}, {$set: fields with version v+1, ...}). Matching nothing means a
// concurrent writer won; Update reads again and applies fn again (with a short jittered
// backoff), up to Config.MaxRetries times, then answers ports.ErrVersionConflict having stored
// nothing. Accounts are replaced the same way.
//
// Inside one process, writes to one document also take an in-process lock first (see
// localLocks): goroutines of one instance then queue instead of failing each other's
// conditional writes, and a server that does not execute conditional updates atomically
// (FerretDB v1) stays correct for a single instance.
//
// # Uniqueness without partial indexes
//
// Unique indexes: _id; (accountId, idem) on transactions and withdrawals; (accountId, seq) on
// withdrawals. An idempotency key is unique per account, but documents without one must not
// collide, and partial indexes (the usual answer) exist neither on FerretDB nor comfortably on
// sharded clusters. So idem is always present and always unique: "key:<the key>" when the
// request had one, "id:<the document's id>" otherwise. A duplicate key error becomes
// ports.ErrDuplicate.
//
// # Reservations without transactions
//
// WithdrawalRepository.CreateReserving must never let two withdrawals pass their check on the
// same money. Each withdrawal takes the next number of its account's sequence, seq, under the
// unique index (accountId, seq). A reservation reads the account's highest seq N, then
// computes the balance, calls check, and inserts the withdrawal with seq N+1. Sequence numbers
// are dense (N+1 is only written after N was read), so a reservation that read N has seen
// every withdrawal numbered up to N, and the balance it reads afterwards includes them all.
// Two reservations that read the same N both try N+1: the index admits one; the other gets a
// duplicate key and starts over, reading N+1 and a balance that includes the winner. After
// Config.MaxRetries lost races it answers ports.ErrVersionConflict. (A duplicate key may also
// come from the id or the idempotency key: those are looked up to tell a real duplicate,
// ports.ErrDuplicate, from a lost race.)
//
// # Balances
//
// The balance is derived, never stored: per-status sums of the account's live transactions
// (amount, amountPaid, feeAmount) and withdrawals (amount, fee) computed on the server with
// $match {accountId, status: {$in: the statuses that move a balance}} and $group by status,
// served by the (accountId, status) indexes, then handed to domain.BalanceTotals. Each sum is
// its own small aggregation, sent concurrently, because FerretDB v1 computes only the first
// accumulator of a $group.
//
// # Indexes
//
// Created at every start, one createIndexes per index (creating an existing index is a no-op).
// On transactions, for the list (always scoped to an account, ordered createdAt desc, _id
// desc): (accountId, createdAt desc, _id desc) for the default order, the dates and the id;
// (accountId, <field>, createdAt desc, _id desc) for status, paymentMethod, search.email,
// customer.document.value, search.phones (multikey) and externalCode; (accountId, <field>) for
// search.name (a regular expression walks the account's keys), endToEnd, endToEndRefund and
// amount. For the sweepers: (status, pix.expiresAt) on transactions and (status, updatedAt,
// _id) on both collections. On withdrawals, (accountId, status) for the balance. Accounts by
// (createdAt, _id); credentials by (accountId, createdAt, _id).
//
// # Sharding
//
// Shard transactions and withdrawals on {accountId: 1}: every unique index above starts with
// accountId except _id, and lists, balances and reservations stay on one shard. MongoDB then
// enforces _id uniqueness per shard only; ids are random UUIDs made by the service, so a
// collision across shards is not a practical concern.
//
// # Errors
//
// Driver errors never cross a port: a duplicate key is ports.ErrDuplicate, no document
// domain.ErrNotFound, and a server that cannot be selected, a network error, a timeout (every
// call runs under Config.OpTimeout) or a node stepping down ports.ErrUnavailable. The driver
// reconnects by itself when the database comes back; the Store needs no reopening.
package mongo
