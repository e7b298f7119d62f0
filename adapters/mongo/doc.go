// Package mongo stores pixgate's aggregates in MongoDB (driver v2): transactions, withdrawals,
// the webhook outbox, the double-entry ledger, the registry of PIX payments, client accounts
// and their credentials. It implements ports.TransactionRepository, ports.WithdrawalRepository,
// ports.Outbox, ports.Ledger, ports.AccountRepository and ports.Pinger, and must not know HTTP,
// the use cases or any other adapter. Open connects, pings, creates the indexes (indexes.go)
// and runs the migrations (migrate.go, payouts.go); Store hands out the repositories.
//
// It runs on a standalone server, a replica set, a sharded cluster (transactions, withdrawals
// and ledger sharded on accountId) and FerretDB v1, with no multi-document transaction. The
// reasons are in docs/adr: 0005 (why writes claim the state they read), 0006 (why events and
// postings ride in the resource's document), 0007 (why no multi-document transactions), 0001
// (a change is one journal entry).
//
// # Where things are
//
// documents*.go map one aggregate each to its document. write.go is the write path of
// transactions and withdrawals, top to bottom: create and updateVersioned, each step named
// (splitPostings, checkedPostings.take, writeClaimed, settleLedger). claims.go holds the write
// claims, postings.go the postings a write posts first or leaves pending, ledger.go the
// journals, recover.go what finishes a write a crash interrupted, locks.go the in-process
// locks, errors.go the mapping of driver errors.
//
// # Invariants
//
// Every guarantee rests on single-document atomicity and unique indexes. A change that breaks
// one of these breaks a guarantee the conformance suite (ports/storetest, run by test/storage
// on FerretDB) may not catch:
//
//   - Never rely on a conditional update being atomic between clients: FerretDB v1 applies
//     updateOne({_id, version: v}) as read, apply, write back. Every write of an existing
//     document claims the state it read under the unique _id of a claims document and filters
//     on that whole state (writeClaimed; for transactions and withdrawals the state is version
//     and outboxRev, stateKey and stateFilter). States only move forward, so one never comes
//     back. A credential, which has no version, is claimed as a whole. Inserts claim nothing: a
//     unique index decides them.
//   - A claim is released only once its write is known to be done; a write that failed in an
//     unknown way leaves it to go stale after Config.RecoverAfter. RecoverAfter must exceed
//     OpTimeout, and every write of a call runs under OpTimeout (Store.op, Store.afterCall).
//   - A status change, its new outbox deliveries and its unchecked postings (ledgerPending) are
//     one updateOne of the resource's document. Status changes only append to the outbox, lower
//     outboxDue with $min and move outboxRev; outbox writes never touch the aggregate's fields
//     or version.
//   - Checked postings (a withdrawal's creation, a refund's hold) are posted before the resource
//     write, marked open. They are given back (their voids posted) only when the write is known
//     not to have happened (checkedPostings.fail; a writeUnknown cause gives nothing back), and
//     their mark is cleared once it is stored. Recover settles the rest by the resource.
//   - Posting is idempotent: posting ids are deterministic (the domain's), and a duplicate _id
//     in the ledger means stored. Recover, retries and racing instances rely on it.
//   - A journal (the postings of one change) is one ledger document, inserted in one step. An
//     account's lines are numbered densely; a journal's first number, computed from the head
//     read, goes under the unique (accountId, seq) index, which alone decides between racing
//     posts. An account's balance is its latest line's after.
//   - Idempotency keys and payment tokens are unique without partial indexes: idem and payKey
//     are always present ("key:"/"tok:" when set, "id:<document id>" otherwise).
//   - Inside one process, a write takes its document's in-process lock first, and a post its
//     account's ledger lock, always after a document lock and never two of one set (locks.go).
//     The locks make goroutines queue; across instances the claims and indexes are what hold.
//   - Field names are the stored format (and the index definitions): rename or reshape one only
//     with a migration that is idempotent and safe from several instances starting at once
//     (markers with unique _ids, as migrate.go does).
//   - Writes use majority write concern and reads majority read concern: the ledger's argument
//     needs reads that never go backwards.
//   - Driver errors never cross a port (mapErr): a duplicate key is ports.ErrDuplicate, no
//     document domain.ErrNotFound, and an unreachable or slow server ports.ErrUnavailable.
//
// Config.NoClaims skips the claims; it is correct only for a single instance or on MongoDB,
// and pixgate never sets it.
package mongo
