package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/pixgate/pixgate/application"
)

// twoInstances are two pixgate servers assembled as `serve` assembles them, sharing one memory
// store, one signing key and one clock the test moves: what two instances behind a load
// balancer share (a MongoDB database, a key file, time).
func twoInstances(t *testing.T, vars map[string]string) (first, second *env, clock *fakeClock) {
	t.Helper()
	clock = &fakeClock{}
	cfg, err := loadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	shared, err := openStores(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	share := func(a *app) { a.clock, a.stores = clock, shared }
	return secEnv(t, vars, share), secEnv(t, vars, share), clock
}

func TestAuthCacheAcrossTwoInstancesOnOneStore(t *testing.T) {
	t.Run("a revoked credential's token answers 401 at once where it was revoked, within the TTL on the other", func(t *testing.T) {
		here, there, clock := twoInstances(t, map[string]string{"PIXGATE_AUTH_CACHE_TTL": "2s"})
		_, admin := here.account()
		c := here.secWant(http.StatusCreated, "POST", "/auth/credentials", admin, nil).json(t)
		granted := here.secTokenFromEndpoint(c["client_id"].(string), c["client_secret"].(string))
		if granted.status != http.StatusOK {
			t.Fatalf("token: %d %s", granted.status, granted.body)
		}
		tok := granted.json(t)["access_token"].(string)
		here.secWant(http.StatusOK, "GET", "/transaction", tok, nil)
		there.secWant(http.StatusOK, "GET", "/transaction", tok, nil) // both instances remember it

		here.secWant(http.StatusNoContent, "DELETE", "/auth/credentials/"+c["client_id"].(string), admin, nil)
		problemOf(t, here.do("GET", "/transaction", tok, nil), http.StatusUnauthorized, "unauthorized")
		there.secWant(http.StatusOK, "GET", "/transaction", tok, nil) // still within the TTL there
		clock.Advance(2 * time.Second)
		problemOf(t, there.do("GET", "/transaction", tok, nil), http.StatusUnauthorized, "unauthorized")
	})

	t.Run("a disabled account answers 403 at once where it was disabled, within the TTL on the other", func(t *testing.T) {
		here, there, clock := twoInstances(t, map[string]string{"PIXGATE_AUTH_CACHE_TTL": "2s"})
		accountID, tok := here.account()
		here.secWant(http.StatusOK, "GET", "/balance", tok, nil)
		there.secWant(http.StatusOK, "GET", "/balance", tok, nil)

		if err := application.NewDisableAccount(here.app.stores.accounts).Execute(context.Background(), accountID); err != nil {
			t.Fatal(err)
		}
		problemOf(t, here.do("GET", "/balance", tok, nil), http.StatusForbidden, "forbidden")
		there.secWant(http.StatusOK, "GET", "/balance", tok, nil)
		clock.Advance(2 * time.Second)
		problemOf(t, there.do("GET", "/balance", tok, nil), http.StatusForbidden, "forbidden")
	})

	t.Run("with PIXGATE_AUTH_CACHE_TTL=0 the other instance refuses at once too", func(t *testing.T) {
		here, there, _ := twoInstances(t, map[string]string{"PIXGATE_AUTH_CACHE_TTL": "0"})
		accountID, tok := here.account()
		there.secWant(http.StatusOK, "GET", "/balance", tok, nil)
		if err := application.NewDisableAccount(here.app.stores.accounts).Execute(context.Background(), accountID); err != nil {
			t.Fatal(err)
		}
		problemOf(t, there.do("GET", "/balance", tok, nil), http.StatusForbidden, "forbidden")
	})
}
