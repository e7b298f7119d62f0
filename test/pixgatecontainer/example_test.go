package pixgatecontainer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/testcontainers/testcontainers-go"
	"golang.org/x/oauth2"

	"github.com/pixgate/pixgate/test/pixgatecontainer"
)

// A merchant's test starts the sandbox with an account of its own, creates a transaction with
// an authenticated client, and has the sandbox pay it. (The example needs a pixgate image,
// which `make image` builds as pixgate:local, so it is compiled but not run.)
func ExampleRun() {
	ctx := context.Background()
	ctr, err := pixgatecontainer.Run(ctx, "pixgate:local",
		pixgatecontainer.WithClient("Loja Exemplo", "loja-exemplo", "loja-exemplo-secret-0123456789-abcdef"),
		pixgatecontainer.WithEnv(map[string]string{"PIXGATE_RATE_LIMIT_RPS": "0"}))
	defer func() {
		if err := testcontainers.TerminateContainer(ctr); err != nil {
			log.Printf("terminating pixgate: %v", err)
		}
	}()
	if err != nil {
		log.Printf("starting pixgate: %v", err)
		return
	}
	baseURL, err := ctr.BaseURL(ctx)
	if err != nil {
		log.Printf("pixgate's address: %v", err)
		return
	}

	// Every request of this client carries a bearer token of the account, renewed in time.
	client := oauth2.NewClient(ctx, ctr.TokenSource(ctx))
	res, err := client.Post(baseURL+"/transaction", "application/json",
		strings.NewReader(`{"amount": 2590, "paymentMethod": "PIX", "pix": {"expirationSeconds": 900}}`))
	if err != nil {
		log.Printf("creating a transaction: %v", err)
		return
	}
	defer res.Body.Close()
	var created struct {
		ID          string
		Status      string
		PixResponse struct{ URI string } // the PIX copy-and-paste code (its QR image is beside it)
	}
	if err := json.NewDecoder(res.Body).Decode(&created); err != nil {
		log.Printf("reading the transaction: %v", err)
		return
	}
	fmt.Println(res.StatusCode, created.Status) // 201 PIX_QRCODE_GENERATED

	// Then: POST baseURL+"/sandbox/transaction/"+id+"/pay" marks it PAID, as a bank would.
}
