package ports

import "errors"

// Plain outcomes of the ports, shared by every adapter. Adapters translate their driver's errors
// into these (or into domain.ErrNotFound); no driver error crosses a port. Test them with
// errors.Is.
var (
	// ErrDuplicate: a create would break a uniqueness rule (an id, a client id, an idempotency
	// key that is already stored). Nothing was written.
	ErrDuplicate = errors.New("duplicate")

	// ErrVersionConflict: a closure-shaped update kept losing the race against concurrent
	// writers and gave up. Nothing was written; the caller may retry the whole operation.
	ErrVersionConflict = errors.New("version conflict")

	// ErrUnavailable: the store cannot be reached or did not answer in time. The outcome of a
	// write that returns it is unknown; it maps to 503.
	ErrUnavailable = errors.New("store unavailable")

	// ErrInvalidToken: a bearer token is missing, malformed, wrongly signed, expired, not yet
	// valid, for another issuer or audience, or its credential was revoked. One error for every
	// case, so that no answer tells an attacker which check failed; it maps to 401.
	ErrInvalidToken = errors.New("invalid token")

	// ErrInvalidCredentials: a client_id/client_secret pair was refused: unknown client, wrong
	// secret, revoked credential or disabled account, all alike. It maps to 401 invalid_client.
	ErrInvalidCredentials = errors.New("invalid client credentials")

	// ErrInvalidScope: a token request asked for a scope the client may not have (the account
	// does not hold it, or the upstream provider refused it). Asked only after the client proved
	// its secret, so that it tells nothing to a stranger. It maps to 400 invalid_scope.
	ErrInvalidScope = errors.New("invalid scope")

	// ErrUpstreamUnavailable: the upstream authentication provider could not be reached, timed
	// out, failed (5xx) or answered something that is not a token response. It maps to 502.
	ErrUpstreamUnavailable = errors.New("upstream authentication provider unavailable")

	// ErrOverloaded: the work was refused before it began, because as much of it as the
	// adapter lets wait is waiting already (the QR renderer's queue). Nothing was done or
	// written; a retry a moment later may succeed. It maps to 503 with Retry-After.
	ErrOverloaded = errors.New("overloaded")

	// ErrTimedOut: the work began but did not end within the adapter's own deadline (the QR
	// renderer's budget for one drawing), and its result, should it come, is thrown away.
	// Nothing was written; a retry a moment later may succeed. It maps to 503 with
	// Retry-After.
	ErrTimedOut = errors.New("timed out")
)
