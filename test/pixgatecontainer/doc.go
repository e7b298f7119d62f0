// Package pixgatecontainer runs pixgate's sandbox in a container, for the integration tests of
// a merchant's own code, in the style of the testcontainers-go modules.
//
// Run starts the image with the sandbox on and the client accounts of WithClient seeded
// (PIXGATE_SEED_CLIENTS), and waits until GET /readyz answers 200. The container's API is at
// BaseURL; TokenSource gets bearer tokens for the first seeded account:
//
//	ctr, err := pixgatecontainer.Run(ctx, "pixgate:local",
//		pixgatecontainer.WithClient("Loja Teste", "loja-teste", "a-secret-of-at-least-32-characters"))
//	testcontainers.CleanupContainer(t, ctr)
//	if err != nil {
//		t.Fatal(err)
//	}
//	baseURL, err := ctr.BaseURL(ctx)
//	...
//	client := oauth2.NewClient(ctx, ctr.TokenSource(ctx)) // an *http.Client that sends the token
//	res, err := client.Post(baseURL+"/transaction", "application/json", body)
//
// The sandbox routes (POST /sandbox/transaction/{id}/pay and the others) drive a transaction
// through its states without a bank. Everything lives in memory and dies with the container.
//
// pixgate answers `expires_in` of its token endpoint as the Unix time at which the token
// expires (docs/API.md, Token endpoints), where OAuth 2.0 clients read a lifetime in
// seconds: golang.org/x/oauth2 would believe a token lasts for decades and never renew it.
// TokenSource reads `expires_in_sec`, the lifetime, instead. Code that configures its own
// clientcredentials.Config against pixgate must do the same (FixExpiry).
//
// Without an account of its own (no WithClient), Run seeds one with DefaultClientID and
// DefaultClientSecret. The image is any pixgate image: `make image` in pixgate's repository
// builds pixgate:local without a registry.
package pixgatecontainer
