package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/adapters/qr"
	"github.com/pixgate/pixgate/adapters/system"
	"github.com/pixgate/pixgate/domain"
)

// The sandbox emitter as pixgate's defaults configure it (PIXGATE_PIX_KEY,
// PIXGATE_PIX_MERCHANT_NAME, PIXGATE_PIX_MERCHANT_CITY), so that the baseline draws the very
// BR Codes the server draws.
func defaultEmitter() (*pix.Emitter, error) {
	return pix.NewEmitter(pix.EmitterConfig{PixKey: "pix@pixgate.example", MerchantName: "PIXGATE SANDBOX", MerchantCity: "SAO PAULO"})
}

// loadAmount is the amount of every transaction the harness creates (benchBody's).
const loadAmount = domain.Cents(12345)

// transactionPayloads are n BR Codes of transactions as POST /transaction creates them.
func transactionPayloads(ctx context.Context, n int) ([]string, error) {
	e, err := defaultEmitter()
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	out := make([]string, n)
	for i := range out {
		code, err := e.Emit(ctx, domain.PixCharge{TransactionID: system.UUIDs{}.NewID(), Amount: loadAmount,
			CreatedAt: now, ExpiresAt: now.Add(10 * time.Minute)})
		if err != nil {
			return nil, err
		}
		out[i] = code.URI
	}
	return out, nil
}

// qrCeiling is baseline (b): the Renderer pixgate uses, as many drawings at once as pixgate
// allows (GOMAXPROCS), drawing transaction payloads in a loop for d. It answers images a second,
// the CPU time of the harness's process per image (nothing else runs in it meanwhile) and the
// mean PNG size.
func qrCeiling(ctx context.Context, payloads []string, d time.Duration) (perSecond float64, cpuPerImage time.Duration, pngBytes int, err error) {
	r := qr.NewRenderer(runtime.GOMAXPROCS(0))
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var images, bytes atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	start, cpuBefore := time.Now(), selfCPU()
	for w := range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := w; ctx.Err() == nil; i++ {
				png, err := r.RenderPNG(context.Background(), payloads[i%len(payloads)])
				if err != nil {
					failed.Store(err)
					return
				}
				images.Add(1)
				bytes.Add(int64(len(png)))
			}
		})
	}
	wg.Wait()
	took, cpu := time.Since(start), selfCPU()-cpuBefore
	if err, _ := failed.Load().(error); err != nil {
		return 0, 0, 0, err
	}
	n := images.Load()
	if n == 0 {
		return 0, 0, 0, fmt.Errorf("the renderer drew nothing in %s", d)
	}
	return float64(n) / took.Seconds(), cpu / time.Duration(n), int(bytes.Load() / n), nil
}

// loadBody is the POST /transaction body of the run: every field of docs/API.md, Creating a
// transaction but webhookUrl (a webhook would send the server's traffic off loopback), as large as a
// merchant usually sends. email is the customer's e-mail.
func loadBody(email string) []byte {
	b, err := json.Marshal(map[string]any{
		"amount": int64(loadAmount), "paymentMethod": "PIX", "externalCode": "order-000123",
		"customer": map[string]any{
			"ip": "203.0.113.7", "name": "João D'Ávila-Souza", "email": email, "document": "529.982.247-25",
			"landline": "+55 (11) 3456-7890", "mobilePhone": "(21) 98765-4321", "birthdate": "1990-05-17",
		},
		"seller":        map[string]any{"name": "Loja Exemplo", "document": "11.222.333/0001-81"},
		"isInfoProduct": false,
		"address": map[string]any{
			"zipCode": "01310-100", "number": "1578", "street": "Avenida Paulista", "neighborhood": "Bela Vista",
			"city": "São Paulo", "state": "SP", "country": "Brasil", "complement": "Conjunto 42",
		},
		"items": []any{
			map[string]any{"title": "Camiseta", "unitPrice": 5000, "quantity": 2, "description": "Algodão"},
			map[string]any{"title": "Boné", "unitPrice": 2345},
		},
		"metadata": map[string]any{"campaign": "black-friday", "attempt": 1},
		"pix":      map[string]any{"expirationSeconds": 3600},
	})
	if err != nil {
		panic(err)
	}
	return b
}

// The list's filter matches 1% of the seeded transactions: every hundredth one belongs to
// listEmail, the others to 99 other buyers.
const listEmail = "buyer7@example.com"

func listSeedEmail(i int) string {
	if i%100 == 7 {
		return listEmail
	}
	return fmt.Sprintf("buyer%d@example.com", i%100+100)
}
