// Package domain is the heart of pixgate: money, documents, PIX keys, the Transaction and
// Withdrawal aggregates with their state machines, the events their transitions raise, and the
// balance rules. It imports the standard library only and knows nothing of HTTP, JSON shapes,
// databases or tokens.
package domain
