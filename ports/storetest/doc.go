// Package storetest is the storage conformance suite: the behaviour every adapter of the
// storage ports must have, written as tests, so that two adapters can never answer differently
// for the same case. TestTransactions, TestWithdrawals and TestOutbox cover the repositories of
// transactions and withdrawals (balances included) and the webhook outbox; TestAccounts covers
// ports.AccountRepository.
//
// An adapter runs it from a few lines of its own test file:
//
//	func newStores(t *testing.T) storetest.Stores {
//		s := memory.NewStore() // a MongoDB adapter: a fresh database, dropped in t.Cleanup
//		return storetest.Stores{Transactions: s.Transactions(), Withdrawals: s.Withdrawals(), Outbox: s.Outbox()}
//	}
//
//	func TestTransactions(t *testing.T) { storetest.TestTransactions(t, newStores) }
//	func TestWithdrawals(t *testing.T)  { storetest.TestWithdrawals(t, newStores) }
//	func TestOutbox(t *testing.T)       { storetest.TestOutbox(t, newStores) }
//
// Subtests run in parallel, each with its own store, and keep their data to tens of items, so
// the suite stays quick on a slow database. The package is for tests only and knows no adapter.
package storetest
