// Package e2e holds pixgate's end-to-end suites: the real binary of cmd/pixgate, built into an
// image FROM scratch (testdb.Image), runs in a container beside a MongoDB-compatible database
// container (FerretDB built here, or the image PIXGATE_TEST_MONGO_IMAGE names) on a Docker
// network of the test's own, and the tests drive its public API over real HTTP.
//
// The suites (all in _test.go files; this package has no code of its own):
//
//   - TestMerchantWalksThePublicAPIOnMongoDB: token, create, pay, list, lookup, refund, MED,
//     withdrawals and the balance at every step.
//   - TestRestartKeepsEveryTransactionAndReplaysIdempotentCreations: stop and start pixgate.
//   - TestConcurrentWithdrawalsNeverOverdrawOnMongoDB (and ...ThroughTwoInstances): 20
//     concurrent withdrawals of a third of the balance.
//   - TestThreeInstancesOnOneStoreNeverOverdraw: 50 withdrawals and refunds racing through
//     three instances on one database; then pixgate ledger verify, and the same audit failing
//     on a ledger broken behind pixgate's back.
//   - TestKilledBetweenAStatusChangeAndItsEntriesLeavesTheLedgerWhole: SIGKILL amid payments,
//     refunds, disputes and withdrawals; after restart the audit finds nothing missing or
//     doubled.
//   - TestLedgerVerifyPassesAfterAWalkOnMongoDB: the audit, run inside the container.
//   - TestDatabaseOutageAnswers503AndLosesNoAcknowledgedWrite: the database stops and starts
//     under load.
//   - TestKilledWhileCreatingKeepsEveryAcknowledgedTransactionOnce and
//     TestKilledWhileDeliveringWebhooksDeliversEveryEventAfterTheLease: SIGKILL faults.
//   - TestThreeInstancesOnOneFerretDB: three instances on one FerretDB, requests spread
//     round-robin and at random, one SIGKILLed midway: one transaction per idempotency key,
//     one FAILED transition and event per expiry under three sweepers, money racing without
//     overdraft (and the audit clean), every webhook delivered with never two attempts of one
//     event in flight.
//   - TestTwoInstancesAndASIGKILLPayEachWithdrawalOutOnce and
//     TestEfiRefusalsOnMongoDBGiveTheMoneyBack: withdrawals paid out through a fake Efí
//     (adapters/psp/efi/efitest) listening in the test process, reached from the containers
//     over mutual TLS; one instance SIGKILLed while its sends are in flight, the other taking
//     its payouts over: one payout per withdrawal, every one PROCESSED, the ledger whole; a
//     refused payout gives the money back.
//   - TestBackgroundWorkKeepsItsBoundsUnderManyMerchants: twenty merchants at once, with
//     expiring charges, sandbox refunds, disputes, withdrawals and webhooks: every settlement,
//     expiry and delivery within the bound docs/STORAGE.md states ("Background work").
//   - TestThreeInstancesShareTheRateLimits: POST /transaction and the token endpoint flooded
//     through three instances, then two: together they let through the configured rate.
//
// They need a Docker engine: without one they are skipped, or fail when
// PIXGATE_TEST_REQUIRE_DOCKER=1. There is no in-process fallback, since pixgate itself runs
// in a container.
package e2e
