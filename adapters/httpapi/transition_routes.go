package httpapi

import (
	"net/http"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// transitionHandler serves every route that moves one record of the caller's account by one
// transition (cancel a withdrawal, each of the sandbox's steering steps): the {id} path
// parameter, then the request's input as input reads it (input answers the request itself
// when it refuses it), then 200 with the record as view shows it (its GET's body), or the use
// case's error: 409 from a status the transition does not leave, 404 for an unknown id or
// another account's.
func transitionHandler[R, In any](s *Server, uc *application.Transition[R, In],
	input func(http.ResponseWriter, *http.Request) (In, bool), view func(R) any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, ok := pathID(w, r)
		if !ok {
			return
		}
		in, ok := input(w, r)
		if !ok {
			return
		}
		rec, err := uc.Execute(r.Context(), principalFrom(r.Context()), id, in)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, view(rec))
	}
}

// noInput is the input of a transition that takes none: no body, or an empty JSON object.
func noInput(w http.ResponseWriter, r *http.Request) (application.NoInput, bool) {
	return application.NoInput{}, emptyBody(w, r)
}

// writeCreated answers 201 with the created resource's body and Location, marked as a replay
// when an earlier request with the same idempotency key created it.
func writeCreated(w http.ResponseWriter, location string, replayed bool, body any) {
	markReplayed(w, replayed)
	w.Header().Set("Location", location)
	writeJSON(w, http.StatusCreated, body)
}

// markReplayed sets Idempotent-Replayed on the answer of a replayed request.
func markReplayed(w http.ResponseWriter, replayed bool) {
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
}

// transactionView is a transaction as its GET shows it.
func (s *Server) transactionView(t *domain.Transaction) any {
	return viewTransaction(t, s.cfg.PublicURL)
}
