// Package moneycheck is a concurrency checker for money: many concurrent clients drive
// pixgate's own use cases (package application: charges, the acquirer's callback with payments,
// late payments and devolution outcomes, refunds, MED disputes through the sandbox's steering,
// withdrawals and their outcomes, balance reads) against real stores, record every operation
// with the time it was invoked, its answer and the time of the answer, and then judge the
// history and the ledger the run left:
//
//  1. no debit a merchant asked for (a withdrawal, a refund's hold) takes the available balance
//     below zero in any state a reader can observe: each entry's balanceAfter, read back with
//     Ledger.Scan, less what MED disputes hold (a dispute is not the merchant's choice and may
//     leave available negative), never goes below zero, and a checked debit's own balanceAfter
//     never does;
//  2. every balance read equals the balanceAfter of some entry of the account (or the empty
//     balance), the entries chosen for the reads never going back in real time, never before the
//     entries of an operation that ended before the read began, never at or after those of one
//     that began after it ended;
//  3. each status change has its entries exactly once: per resource, the entries the ledger
//     holds are those the operations that applied asked for, in their order, and the audit
//     `pixgate ledger verify` runs (application.VerifyLedger) finds nothing;
//  4. the ledger accounts sum to zero, and each merchant's ledger ends where its applied
//     operations lead: available and blocked as the balance answers them, the fees its payments
//     paid, the payouts of the withdrawals that still hold money;
//  5. the balance reads and the operations that move money are linearizable against a model of
//     one merchant account (Model), checked with porcupine: a real overdraw, a lost update or a
//     state no sequence of whole operations reaches (half of a change) is reported, and the
//     history is drawn into an HTML file whose path the report names.
//
// A run is seeded: its clients draw every choice (amounts, which step comes next) from the seed,
// so that a failure names the seed that repeats its workload; the interleaving is the
// machine's. A run is bounded in time and in operations per client, and works on accounts of
// its own. The audit of check 3 reads every ledger of the store, so a run needs a store of its
// own.
//
// The package knows the application, the domain, the ports and the adapters the world around a
// store needs (the sandbox's acquirer and steering, the static PIX emitter, the QR renderer,
// ids and clock); it is handed the stores and knows none of them.
package moneycheck
