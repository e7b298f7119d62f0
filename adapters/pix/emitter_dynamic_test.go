package pix_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/domain"
)

func dynamicConfig(prefix string) pix.EmitterConfig {
	cfg := sandbox
	cfg.LocationPrefix = prefix
	return cfg
}

func TestEmitWritesADynamicCodeWithALocation(t *testing.T) {
	const prefix = "pay.shop.example/checkout/pix/qr/"
	e := newEmitter(t, dynamicConfig(prefix))
	code, err := e.Emit(context.Background(), charge(1234))
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseBRCode(code.URI)
	if err != nil {
		t.Fatalf("parseBRCode(%q): %v", code.URI, err)
	}
	loc := code.Location
	if !domain.ValidPixLocationID(loc.ID) || !domain.ValidCobTxID(loc.CobTxID) {
		t.Fatalf("location %+v: want a location id of 25 to 32 and a txid of 26 to 35 characters [A-Za-z0-9]", loc)
	}
	url, _ := c.sub("26", "25")
	checks := []struct {
		name    string
		got     string
		present bool
		want    string
	}{
		{"the point of initiation is single use", get(c, "01"), true, "12"},
		{"26-25 is the location without scheme", url, true, prefix + loc.ID},
		{"the txid is *** (the location states it)", sub(c, "62", "05"), true, "***"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s: got %q, want %q", ch.name, ch.got, ch.want)
		}
	}
	if _, ok := c.sub("26", "01"); ok {
		t.Error("a dynamic code carries a key (26-01)")
	}
	if _, ok := c.get("54"); ok {
		t.Error("a dynamic code carries an amount (54)")
	}
	static, _ := pix.TxIDFromTransactionID(transactionID)
	if strings.Contains(code.URI, static) || loc.CobTxID == static || strings.Contains(code.URI, transactionID) {
		t.Error("the code or its txid shows the transaction id")
	}
}

func get(c brCode, id string) string    { v, _ := c.get(id); return v }
func sub(c brCode, id, s string) string { v, _ := c.sub(id, s); return v }

func TestEmitDynamicLocationsAreFreshForEveryCharge(t *testing.T) {
	e := newEmitter(t, dynamicConfig("pay.shop.example/pix/qr/"))
	seen := map[string]bool{}
	for range 200 {
		code, err := e.Emit(context.Background(), charge(1000)) // the same transaction id each time
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{code.Location.ID, code.Location.CobTxID} {
			if seen[v] {
				t.Fatalf("%q came twice", v)
			}
			seen[v] = true
		}
	}
}

func TestEmitDynamicStillRefusesWhatItCannotCharge(t *testing.T) {
	e := newEmitter(t, dynamicConfig("pay.shop.example/pix/qr/"))
	for _, c := range []domain.PixCharge{charge(0), charge(domain.MaxAmount + 1), {TransactionID: "not-a-uuid", Amount: 1000}} {
		if code, err := e.Emit(context.Background(), c); err == nil {
			t.Errorf("Emit(%+v) = %q; want an error", c, code.URI)
		}
	}
}

func TestNewEmitterRefusesABadLocationPrefix(t *testing.T) {
	longest := strings.Repeat("h", pix.MaxLocationPrefix-len("/pix/qr/")) + "/pix/qr/"
	e := newEmitter(t, dynamicConfig(longest))
	code, err := e.Emit(context.Background(), charge(1000))
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseBRCode(code.URI)
	if err != nil {
		t.Fatal(err)
	}
	if url, _ := c.sub("26", "25"); len(url) != 77 {
		t.Fatalf("the longest location has %d characters, want 77", len(url))
	}
	for _, bad := range []string{longest + "x", "https://pay.shop.example/pix/qr/", "pay shop/pix/qr/"} {
		if _, err := pix.NewEmitter(dynamicConfig(bad)); err == nil {
			t.Errorf("NewEmitter with prefix %q succeeded", bad)
		}
	}
}
