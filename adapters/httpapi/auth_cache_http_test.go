package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/application"
)

// secTwoInstances are two APIs assembled as `serve` assembles them, sharing one account store,
// one signing key (the harness's) and one clock the test moves: what two instances behind a
// load balancer share (a MongoDB database, a key file, time). s is each one's settings.
func secTwoInstances(t *testing.T, s apiSettings) (first, second *api, clock *fakeClock) {
	t.Helper()
	clock = newFakeClock(time.Now().UTC())
	s.Clock, s.Accounts, s.SettleNow = clock, memory.NewAccounts(), true
	return newAPI(t, s), newAPI(t, s), clock
}

func TestAuthCacheAcrossTwoInstancesOnOneStore(t *testing.T) {
	t.Parallel()
	t.Run("a revoked credential's token answers 401 at once where it was revoked, within the TTL on the other", func(t *testing.T) {
		t.Parallel()
		here, there, clock := secTwoInstances(t, apiSettings{AuthCacheTTL: 2 * time.Second})
		_, admin := here.account()
		c := here.want(t, http.StatusCreated, "POST", "/auth/credentials", admin, nil).json(t)
		granted := here.clientCredentials(c["client_id"].(string), c["client_secret"].(string))
		if granted.status != http.StatusOK {
			t.Fatalf("token: %d %s", granted.status, granted.body)
		}
		tok := granted.json(t)["access_token"].(string)
		here.want(t, http.StatusOK, "GET", "/transaction", tok, nil)
		there.want(t, http.StatusOK, "GET", "/transaction", tok, nil) // both instances remember it

		here.want(t, http.StatusNoContent, "DELETE", "/auth/credentials/"+c["client_id"].(string), admin, nil)
		problem(t, here.do("GET", "/transaction", tok, nil), http.StatusUnauthorized, "unauthorized")
		there.want(t, http.StatusOK, "GET", "/transaction", tok, nil) // still within the TTL there
		clock.Advance(2 * time.Second)
		problem(t, there.do("GET", "/transaction", tok, nil), http.StatusUnauthorized, "unauthorized")
	})

	t.Run("a disabled account answers 403 at once where it was disabled, within the TTL on the other", func(t *testing.T) {
		t.Parallel()
		here, there, clock := secTwoInstances(t, apiSettings{AuthCacheTTL: 2 * time.Second})
		accountID, tok := here.account()
		here.want(t, http.StatusOK, "GET", "/balance", tok, nil)
		there.want(t, http.StatusOK, "GET", "/balance", tok, nil)

		must(t, application.NewDisableAccount(here.accounts).Execute(context.Background(), accountID))
		problem(t, here.do("GET", "/balance", tok, nil), http.StatusForbidden, "forbidden")
		there.want(t, http.StatusOK, "GET", "/balance", tok, nil)
		clock.Advance(2 * time.Second)
		problem(t, there.do("GET", "/balance", tok, nil), http.StatusForbidden, "forbidden")
	})

	t.Run("with no auth cache (PIXGATE_AUTH_CACHE_TTL=0) the other instance refuses at once too", func(t *testing.T) {
		t.Parallel()
		here, there, _ := secTwoInstances(t, apiSettings{NoAuthCache: true})
		accountID, tok := here.account()
		there.want(t, http.StatusOK, "GET", "/balance", tok, nil)
		must(t, application.NewDisableAccount(here.accounts).Execute(context.Background(), accountID))
		problem(t, there.do("GET", "/balance", tok, nil), http.StatusForbidden, "forbidden")
	})
}
