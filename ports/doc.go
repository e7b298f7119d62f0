// Package ports holds the interfaces the application needs from the outside world: storage,
// clock, identifiers, randomness and client secrets, the PIX emitter, directory and QR renderer,
// token verification, webhook delivery. Each interface documents the errors it returns and what
// it promises under concurrent use. Every method that may do I/O takes a context first. Adapters implement these; the application depends on
// nothing else.
package ports
