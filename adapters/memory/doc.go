// Package memory is pixgate's in-memory storage and its default: Accounts keeps client accounts
// and credentials, Store keeps transactions, withdrawals, balances and the webhook outbox.
// Everything lives in the process and is lost when it stops, which suits `make run`, the
// sandbox and unit tests, not production. Every type is safe for concurrent use.
//
// It implements the storage ports and knows the domain; it knows nothing of HTTP, of tokens or
// of the other adapters. It keeps domain records: what they share with the aggregates handed
// in and out is never changed in place (domain/clone.go), and the aggregates' getters hand out
// copies, so no caller ever shares mutable state with the store.
package memory
