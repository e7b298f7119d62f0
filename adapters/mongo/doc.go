// Package mongo stores pixgate's aggregates in MongoDB (driver v2): transactions, withdrawals,
// the webhook outbox, the double-entry ledger and the registry of PIX payments, client
// accounts and their credentials. It implements ports.TransactionRepository,
// ports.WithdrawalRepository, ports.Outbox, ports.Ledger, ports.AccountRepository and
// ports.Pinger, and must not know HTTP, the use cases or any other adapter. Open connects,
// pings, creates the indexes and brings a database written before the ledger to it; Store
// hands out the repositories.
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
//     payment fields, refunds (one element per refund: id, amount, reason, status,
//     endToEndRefund, errorMessage, createdAt, completedAt, idempotency key and fingerprint,
//     step), version, idem (see below), search (lower-cased copies the list filters match),
//     the outbox fields and the pending postings (see The ledger).
//   - withdrawals: the same shape for withdrawals, with the payout outbox's state (see The
//     payout outbox).
//   - ledger: one document per journal entry, the lines one change recorded (see The ledger).
//   - payments: one document per claimed PIX payment: _id (its end-to-end id), transactionId,
//     accountId, amount, late, createdAt. The unique _id makes the first claim win, for ever.
//   - migrations: the markers of the ledger migration (see Upgrading).
//   - claims: one document per write in progress of an existing document: _id (the state
//     claimed), at (see Exclusive writes across instances).
//   - instances: one document per live instance: _id, seenAt (the shared rate limits).
//   - accounts: _id, name, status, scopes, scopeSet (the revision of the scope list the
//     document was written under; see Upgrading), webhook secrets, createdAt, version.
//   - credentials: _id (the client id, unique across accounts), accountId, secretHash,
//     createdAt, revokedAt, lastUsedAt, slot (see The credential cap).
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
//     of the index range for good. Beside it, outboxOpen is true while outboxDue is set (and
//     absent otherwise), and Claim filters on it too: FerretDB on PostgreSQL filters an
//     equality on a boolean in the database but reads the whole collection for a range on a
//     date, so without it every claim read every document, snapshots and QR images included.
//     Every 30 s a claim looks without it, for documents written before the field existed.
//     RecordAttempt reads the document of an event this process leased by _id; only an event
//     leased elsewhere is looked for by outbox.id (which FerretDB answers by reading every
//     document too).
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
// never touch the aggregate's fields or its version. Both kinds of writers are guarded by the
// document's whole state, though (version and outboxRev: see Exclusive writes across
// instances), so a dispatcher retries after a status change and the other way round. Other
// indexes: outbox.id (multikey) finds the event RecordAttempt names, outbox.owner the leases
// Release gives back.
//
// # The payout outbox
//
// A withdrawal's payout is sent by an outbox whose state lives in the withdrawal's document,
// written by the withdrawal's own Update like any of its fields: payoutDue (when the outbox
// next looks at it; null once nothing is left to send or read back) and payoutClaims (how many
// times the outbox claimed it). ListPayoutsDue finds the due work with {payoutDue: {$lte: now}}
// sorted by (payoutDue, _id), through the index of that name: a done payout holds null, outside
// the range, so the look-up never meets the withdrawals paid out long ago (FerretDB v1 on
// SQLite reads the collection for it, like every sweep). A claim is an Update, exclusive across
// instances through the write claims below: of two outboxes, or an outbox and a merchant's
// cancel, one writes first and the other reads the result, on FerretDB as on MongoDB.
//
// # The devolution outbox
//
// A refund's devolution keeps its state in its refund (refunds[].devolutionDue and
// devolutionClaims), written by the transaction's Update; the transaction document repeats the
// refund in progress's due time at the top (devolutionDue, null when nothing is due) for
// ListDevolutionsDue's (devolutionDue, _id) index. A late payment's devolution keeps it in its
// payment claim (devolutionDue, devolutionClaims), first written by MarkLate in the write that
// marks the claim late; UpdateLateDevolution writes it over the version it read under a write
// claim of that version (below), so that one writer at a time moves it, across instances.
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
// conditional writes.
//
// # Exclusive writes across instances
//
// A version check is not enough on every server: FerretDB v1 executes updateOne({_id,
// version: v}) by reading the matching document, applying the update in its own memory and
// writing the whole document back by _id, with nothing between the read and the write. Two
// clients can then both match version v (measured: 895 acknowledged successes for 513 real
// changes in two loops of 500), and any two writes of one document (a status change and a
// lease, a revocation and a record of use) can undo each other. Unique indexes, on the other
// hand, FerretDB enforces atomically, as MongoDB does.
//
// So every write to an existing document first claims the document's state under a unique
// key: it inserts into the claims collection a document whose _id names the collection, the
// document and the state it read ("transactions/<id>/v<version>/o<outboxRev>#0", see
// claimWrite), writes with a filter on that whole state (stateFilter: version and outboxRev),
// and deletes the claim once the write returned. The unique _id lets one writer at a time hold
// the claim of a state, from any number of instances; a writer that finds it held has lost
// the race, reads again and retries (as on a version conflict). One whose claim is of a state
// that has passed — the holder wrote and released before it claimed — matches nothing with
// its filter: states never repeat (version and outboxRev only grow). Hence two writes of one
// document never run at once, and a write applies to the state its writer read:
//
//   - one transition per expiry, refund settlement or payment, whichever instance's sweeper
//     or request gets there, with its one event (they are in the same write);
//   - one delivery attempt in flight per event: a lease is an outbox write, so two
//     dispatchers never both lease one delivery;
//   - the clear of pending postings (finishPending) writes under the claim of the state it
//     cleared, and skips when someone else holds it (that writer carries them over).
//
// Accounts claim "accounts/<id>/v<version>" before their version-checked replace. A
// credential has no version: its writes (a revocation, a record of use) claim
// "credentials/<client id>" as a whole, the revocation waiting its turn and a record of use
// skipping when the claim is held, so a record of use can never write back a credential as it
// was before its revocation.
//
// A claim whose writer died between the insert and the delete stays. Once it is older than
// Config.RecoverAfter, longer than any call may still be writing (every write runs under
// OpTimeout, which RecoverAfter exceeds), it is stale: the next writer claims the key's next
// generation ("#1") and deletes both with its own. A stale claim of a state that has passed
// (the write landed) blocks nothing: nobody claims that state again, and it stays as a small
// leftover document. A claim whose
// write failed in an unknown way (the database went away) is left to go stale, since the
// write may still land. The cost is one insert and one delete per write of an existing
// document (docs/PERFORMANCE.md measures it); creations, ledger entries and payments are
// inserts already and claim nothing, and so do the writes that have no concurrent writer of
// another kind: the open mark of a ledger journal (cleared, never set again), a payment's late
// flag, and the payment-token migration at start (documents written before the payment
// page, while instances of the new version start). Config.NoClaims skips the claims, which is correct for a
// single instance (the in-process locks) or on MongoDB, whose conditional updates are atomic;
// pixgate never sets it.
//
// The live instances register in the instances collection (Instances): _id the instance's
// id, seenAt its last heartbeat, written only by that instance. The rate limits divide their
// rate by the count of instances seen within the heartbeat's time to live.
//
// # The ledger
//
// Every movement of money is a line of a double-entry ledger, and the lines one change
// records together (a journal entry, domain.Journals: a payment and its fee) are one document
// in the ledger collection, written in one insert, so that no reader and no balance check
// ever finds some of them without the others. A posting at a time would leave a gap: a
// withdrawal landing between a payment and its fee would take the money the fee then
// overdraws.
//
// A document's own fields are its first line: _id (the first posting's id, derived by the
// domain from the resource and the transition, never random), accountId ("" for the service's
// own ledger: late payments), seq (the line's number), type, resource, resourceId, debit,
// credit, amount, checked, at, createdAt, and after {available, blocked}, the merchant's
// balance once the line applied. legs holds the lines after it, each {id, type, debit, credit,
// amount, checked, at, after}, numbered seq+1, seq+2..., of the same account and resource and
// dated alike; last is the number of the last line. A document written before journals is a
// journal of one line (no legs, no last): nothing to migrate. An account's balance is its
// latest line's after: one indexed read, whatever the length of its history (plus, for
// pending, a sum over its charges awaiting payment, through the (accountId, status) index of
// transactions, which holds only live charges in that status).
//
// Lines are numbered per account, 1, 2, 3..., densely, and a journal's document carries the
// number of its first line under the unique index (accountId, seq). Posting reads the ledger's
// head (the journal with the highest seq, whose last line is N: one FindOne sorted backwards
// on that index), lets domain.NextJournal number, date and apply every posting of the journal
// after it, in order (lines N+1 to N+k, each with its balance after, a checked posting checked
// against the lines before it), and inserts the journal with seq N+1. The index admits one
// journal per first number, and first numbers stay dense: by induction, every journal's first
// number is the last number of the journal before it plus one, since N+1 is computed only from
// a head whose last line is N. A writer that read a head which is no longer the head computes
// exactly the first number of the journal written after that head, which is taken, so the
// index refuses it; and no journal can start inside another's lines, because every head read
// ends at a journal's last line. So an insert that succeeds was computed from the journal
// right before it: its balances, and a checked posting's balance check (a withdrawal, a
// refund's hold: available must cover it), saw every earlier movement of the account. Two
// writers that read the same head both try N+1; the index admits one, and the other reads
// again and retries (jittered backoff, Config.MaxRetries, then ports.ErrVersionConflict).
// Hence two debits can never pass the check on the same money, and no debit runs between the
// lines of a journal, across any number of instances. Only the unique index decides, never a
// conditional update, which FerretDB does not apply atomically.
//
// A duplicate key on _id instead means the journal is stored already: posting is idempotent,
// which is what makes retries, recovery and racing instances store each movement once. (Which
// unique index refused an insert is asked of the data, by looking the _ids up: FerretDB does
// not name the index in its error.) A posting is stored either as the first line of the
// document named by its own id or as a later line of the document named by its journal, so
// one read by _id tells which postings of a journal are stored. A database written before
// journals may hold part of one: a payment stored as a document of its own, its fee not yet
// (the old version posted them one by one and crashed between). The postings still missing
// are then posted, each as a journal of its own; so are they when a journal's check refuses
// it and part of it is stored (postings stored already are not refused for the money they
// took themselves).
//
// This is correct where conditional updates are not atomic between clients — FerretDB v1
// reads the matching document, applies an update in its own memory and writes the document
// back, so two updateOne({_id, version: v}) can both succeed — because it never relies on
// one: only on unique indexes, which FerretDB enforces atomically as MongoDB does. Inside one
// process, the posts to one account also take an in-process lock (ledger locks, a set apart
// from the document locks, always taken after them), so that its goroutines take turns rather
// than race through the database.
//
// Every read answers lines, one domain.Entry per posting, as before journals. Statements walk
// the (accountId, createdAt, seq) index backwards over journals: dates never go back within a
// ledger (domain.NextEntry) and a journal's lines share its date, so that order is the order
// of the numbers, and a date filter or a page cursor (turned into a date bound by one indexed
// read of the journal holding the line before it) is a range of the index, as fast deep in a
// long ledger as at its top. A type filter matches a journal by any of its lines; the lines
// are then cut to the cursor and the types. Scan reads journals by seq and hands out their
// lines.
//
// # A status change and its entries
//
// The change lives in the resource's document and its entries in the ledger; without a
// transaction the two writes are made so that a crash between them loses nothing:
//
//   - Unchecked postings (a payment and its fee, a refund's completion or failure, a dispute,
//     a withdrawal coming back) are pushed into a ledgerPending array of the resource's
//     document in the same version-checked updateOne as the status change, each with its
//     journal (the id of the journal's first posting), with ledgerDue (the time of the oldest
//     pending posting, indexed) lowered with $min. Once the write is stored they are posted,
//     each journal in one step (the array may hold several changes' postings, carried over),
//     and then cleared ($unset of both fields, guarded by the version written: a change that
//     got in between carried them over and its writer clears them). A crash in between leaves
//     them in the document; the next change of the document, or Recover, posts them. Posting
//     twice stores once, so losing a clear (or, on FerretDB, a race between a clear and
//     another instance's write) costs only a repeated, harmless post. Pending postings a
//     version before journals wrote carry no journal: those of one document are posted as one
//     journal (all unchecked, of one resource, their changes stored).
//   - Checked postings (a withdrawal's creation, a refund's hold) must pass the balance check
//     before the change may be stored, so they are posted first, marked open (the journal's open
//     field holds when it was posted, by the adapter's clock), after fn ran on the freshly read
//     aggregate. When the check fails the call answers domain.ErrInsufficientBalance and stores
//     nothing. When the resource write then fails for good — the closure refuses on a later
//     read, conflicts run out, an insert meets a duplicate — the posting's Void (its
//     compensating posting, with an id of its own; the voids of a journal are one journal) is
//     posted at once, so the money comes back.
//     When the write succeeds the open mark is cleared. A write that failed otherwise (the
//     database went away) may have happened, so the posting stays open. Postings a change
//     raised before its last checked one (and the rest of that one's journal) go first with
//     it, so that the check sees them.
//
// Recover finishes both kinds once they are older than Config.RecoverAfter: documents whose
// ledgerDue has passed get their pending postings posted and cleared; open journals are
// settled by looking at their resource — if its stored history implies the journal's first
// posting (domain.ImpliedTransactionPostings, ImpliedWithdrawalPostings: the withdrawal exists,
// the transaction holds the refund) the mark is cleared, otherwise the journal's voids are
// posted.
// Judging by the resource is safe only once the call that posted the entry is over, and a call
// never lasts longer than Config.OpTimeout (every write of it runs under that deadline):
// RecoverAfter is at least twice OpTimeout by default, and Open refuses one that is not more
// than OpTimeout, so a resource write that is not there when Recover looks never lands after.
// (The open mark and ledgerDue are the posting instance's clock, compared with the recovering
// instance's: their clocks must agree to well within RecoverAfter less OpTimeout.) Each
// Recover call looks at a bounded number of documents and entries, the oldest first.
//
// # Upgrading
//
// The version before the ledger derived balances from the statuses of transactions and
// withdrawals, and stored neither refunds (a refund was the whole amount paid, in the status
// only) nor entries. Reading such a transaction in PROCESSING_REFUND or REFUNDED rebuilds its
// one refund (an id derived from the transaction's, the amount paid, the history step of its
// request), which its next status change stores. Open then runs MigrateLedger: for every
// account with transactions or withdrawals it posts the entries their histories imply, each
// change's as one journal (unchecked: history is not judged again; deterministic ids make a
// second run a no-op), and
// one opening_balance posting per merchant account that brings the ledger to the balance the
// old rules gave, so GET /balance reads the same before and after the upgrade. The opening
// figures of an account are decided once, by inserting a marker ("ledger/<account>", unique
// _id) in migrations, and every instance posts the figures stored there, so two instances
// starting at once agree; a marker "ledger" ends the migration for good. The old version must
// be stopped first: its status changes post nothing. Open also drops the withdrawals' old
// indexes (the (accountId, seq) numbering the old balance check relied on, unique, which new
// withdrawals without seq would violate).
//
// The version before the payout outbox wrote withdrawals without payoutDue. Open runs
// MigratePayouts: every such withdrawal still PENDING or PROCESSING is made due at its last
// change, through Update (it claims the document like any write, so a change from an instance
// already upgraded is neither lost nor undone), and a marker ("payouts") ends the migration for
// good. As with the ledger's, the old version must be stopped first.
//
// Accounts written before a scope existed get, when read, what they could do then
// (domain.UpgradeLegacyScopes, by their scopeSet): balance:read for readers of transactions,
// account:admin for every account. The next rewrite of the account stores the upgrade.
//
// # The credential cap
//
// An account holds at most domain.MaxActiveCredentials credentials that are not revoked. Each
// active credential holds a slot, "<accountId>/<n>" with n below the cap, under a unique sparse
// index (IndexCredentialSlot): a creation reads the account's active credentials, claims the
// lowest free slot with its insert, and on a duplicate slot reads again. Two creations racing
// for the last slot, from any number of instances, cannot both win: the unique index decides,
// and FerretDB enforces it atomically too (it ignores sparse, but indexes a missing field as SQL
// NULL, which never collides). Revoking unsets the slot. Credentials stored before the cap have
// no slot; with u of them active only slots below the cap less u are offered, and u never grows
// (new credentials always take a slot), so the cap holds for such accounts as well. lastUsedAt
// only moves forward: the update matches a missing or earlier value.
//
// # Uniqueness without partial indexes
//
// Unique indexes: _id; (accountId, idem) on transactions and withdrawals; (accountId, seq) on
// ledger. An idempotency key is unique per account, but documents without one must not
// collide, and partial indexes (the usual answer) exist neither on FerretDB nor comfortably on
// sharded clusters. So idem is always present and always unique: "key:<the key>" when the
// request had one, "id:<the document's id>" otherwise. A duplicate key error becomes
// ports.ErrDuplicate. A withdrawal looks for a duplicate (id and idem) before its balance is
// checked, so that a repeated request whose first attempt spent the balance finds its
// withdrawal; a twin that slips in between is refused by the index at insert, and its posting
// given back.
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
// _id) on both collections. payKey unique on transactions, for the payment page (created by
// MigratePaymentTokens once every document has one). On withdrawals, (accountId, createdAt, _id) for an account's
// withdrawals in order, and (payoutDue, _id) for the payout outbox. ledgerDue on both, for Recover. On ledger, (accountId, seq) unique (a
// journal's first line), (accountId, createdAt, seq) for statements, open for Recover. On
// payments, (late, createdAt, _id). Accounts by (createdAt, _id); credentials by (accountId,
// createdAt, _id), and slot unique and sparse.
//
// # Sharding
//
// Shard transactions, withdrawals and ledger on {accountId: 1}: every unique index above
// starts with accountId except _id, and lists, balances and an account's postings stay on one
// shard. MongoDB then enforces _id uniqueness per shard only; resource ids are random UUIDs
// made by the service and posting ids derive from them, so a collision across shards is not a
// practical concern (a journal's _id is still unique within its account's shard, which is what
// idempotent posting needs). Payments are keyed by end-to-end id and may be sharded on _id.
//
// # Errors
//
// Driver errors never cross a port: a duplicate key is ports.ErrDuplicate, no document
// domain.ErrNotFound, and a server that cannot be selected, a network error, a timeout (every
// call runs under Config.OpTimeout) or a node stepping down ports.ErrUnavailable. The driver
// reconnects by itself when the database comes back; the Store needs no reopening.
package mongo
