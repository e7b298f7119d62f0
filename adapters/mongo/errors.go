package mongo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// unavailableCodes are server error codes that mean "not now" rather than "never": the node
// is stepping down, shutting down, not (yet) primary, or could not reach the others in time.
var unavailableCodes = map[int32]bool{
	6:     true, // HostUnreachable
	7:     true, // HostNotFound
	50:    true, // MaxTimeMSExpired
	64:    true, // WriteConcernFailed
	89:    true, // NetworkTimeout
	91:    true, // ShutdownInProgress
	189:   true, // PrimarySteppedDown
	262:   true, // ExceededTimeLimit
	9001:  true, // SocketException
	10107: true, // NotWritablePrimary
	11600: true, // InterruptedAtShutdown
	11602: true, // InterruptedDueToReplStateChange
	13435: true, // NotPrimaryNoSecondaryOk
	13436: true, // NotPrimaryOrSecondary
}

// mapErr translates a driver error into the ports' errors, so that no driver type crosses a
// port: duplicate keys become ports.ErrDuplicate, a missing document domain.ErrNotFound, and
// everything that says the database cannot be reached or did not answer in time
// ports.ErrUnavailable. A cancellation by the caller stays context.Canceled. Anything else is a
// bug or a misconfiguration and keeps only its text.
//
// ctx is the call's: a context.Canceled inside err is the caller's only when ctx itself was
// canceled. Otherwise the driver canceled the operation on its own, interrupting the
// connections of a server it lost, and the database is what is unavailable.
func mapErr(ctx context.Context, op string, err error) error {
	var se mdb.ServerError
	var ne net.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, mdb.ErrNoDocuments):
		return fmt.Errorf("mongo %s: %w", op, domain.ErrNotFound)
	case mdb.IsDuplicateKeyError(err):
		return fmt.Errorf("mongo %s: %w", op, ports.ErrDuplicate)
	case errors.Is(err, context.Canceled) && errors.Is(ctx.Err(), context.Canceled):
		return fmt.Errorf("mongo %s: %w", op, context.Canceled)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%w: mongo %s: interrupted by the driver: %v", ports.ErrUnavailable, op, err)
	case mdb.IsTimeout(err), mdb.IsNetworkError(err), errors.Is(err, mdb.ErrClientDisconnected),
		isServerSelection(err), errors.As(err, &ne), isPoolCleared(err):
		return fmt.Errorf("%w: mongo %s: %v", ports.ErrUnavailable, op, err)
	case errors.As(err, &se) && (hasAnyCode(se) || interruptedByServer(se)):
		return fmt.Errorf("%w: mongo %s: %v", ports.ErrUnavailable, op, err)
	}
	var le mdb.LabeledError
	if errors.As(err, &le) && (le.HasErrorLabel("RetryableWriteError") || le.HasErrorLabel("TransientTransactionError")) {
		return fmt.Errorf("%w: mongo %s: %v", ports.ErrUnavailable, op, err)
	}
	return fmt.Errorf("mongo %s: %v", op, err)
}

// isPoolCleared reports the driver's "connection pool was cleared" error, which requests
// waiting for a connection get when the server went away; it has no label and is no net.Error,
// but it means the database cannot be reached, like the rest of this family.
func isPoolCleared(err error) bool {
	var rpe driver.RetryablePoolError
	return errors.As(err, &rpe) && rpe.Retryable()
}

// interruptedByServer reports a server that abandoned the operation because it is going away:
// MongoDB says so with InterruptedAtShutdown (in unavailableCodes); FerretDB answers
// InternalError (1) whose message ends in "context canceled". Either way the database did not
// do the work and a retry later may: unavailable, not a bug.
func interruptedByServer(se mdb.ServerError) bool {
	return se.HasErrorCode(1) && strings.Contains(se.Error(), "context canceled")
}

func hasAnyCode(se mdb.ServerError) bool {
	for code := range unavailableCodes {
		if se.HasErrorCode(int(code)) {
			return true
		}
	}
	return false
}

// isServerSelection recognises the driver's "no server answered" failure, whose type only
// the driver's x/ packages export.
func isServerSelection(err error) bool {
	var sse topology.ServerSelectionError
	return errors.As(err, &sse)
}
