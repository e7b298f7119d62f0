package pix_test

import (
	"context"
	"testing"

	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/domain"
)

// BenchmarkBRCode measures writing one charge's BR Code, txid derivation included: the part of
// creating a transaction this package owns.
func BenchmarkBRCode(b *testing.B) {
	e, err := pix.NewEmitter(pix.EmitterConfig{PixKey: "pagamentos@pixgate.example", MerchantName: "Padaria São João", MerchantCity: "Florianópolis"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	c := domain.PixCharge{TransactionID: "9f1c2a4e-7b3d-4e8f-a1b2-c3d4e5f60718", Amount: 123456}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Emit(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}
