package qrbench_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"image/png"
	"math/big"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/adapters/qr"
	"github.com/pixgate/pixgate/adapters/qr/qrtest"
	"github.com/pixgate/pixgate/domain"
)

// envReadbackCodes sets how many codes TestProductCodesReadBackWithBothReaders draws; make
// qr-readback sets it to thousands.
const envReadbackCodes = "PIXGATE_QR_READBACK_CODES"

// defaultReadbackCodes keeps `make test` to seconds of reading (zbarimg is a process of its own
// per image, about 20 ms; gozxing takes a few).
const defaultReadbackCodes = 300

// maxGozxingMisses bounds the share of images in which gozxing finds nothing: about 2% of the
// renderer's images (docs/PERFORMANCE.md, "QR codes read back"), so that 8% (24 of 300 where
// about 6 are expected) is out of chance's reach, and still catches a renderer that draws
// worse.
const maxGozxingMisses = 0.08

// TestProductCodesReadBackWithBothReaders draws random BR Codes with the product's own emitter
// (adapters/pix), static and dynamic alike, and its own renderer (adapters/qr), and reads each
// image back with both readers of qrtest: zbar must read every one exactly as it was written,
// gozxing must never read another text, and may find nothing in a few images only. It logs
// the figures docs/PERFORMANCE.md quotes.
func TestProductCodesReadBackWithBothReaders(t *testing.T) {
	qrtest.Zbarimg(t) // skips (or fails in CI) before any drawing without a reader
	n := defaultReadbackCodes
	if v := os.Getenv(envReadbackCodes); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > 1_000_000 {
			t.Fatalf("%s=%q: want a count from 1 to 1000000", envReadbackCodes, v)
		}
	}
	type tally struct {
		codes, misses int
		versions      map[int]int
		missed        []string
	}
	var mu sync.Mutex
	tallies := map[string]*tally{"static": {versions: map[int]int{}}, "dynamic": {versions: map[int]int{}}}
	r := qr.NewRenderer(0)
	start := time.Now()
	// One subtest per processor, each drawing and reading its share in turn: the readers fail
	// the subtest that called them, from its own goroutine.
	workers := runtime.GOMAXPROCS(0)
	t.Run("readers", func(t *testing.T) {
		for w := range workers {
			t.Run(strconv.Itoa(w), func(t *testing.T) {
				t.Parallel()
				for i := w; i < n; i += workers {
					kind, uri := randomCode(t, i)
					img, err := r.RenderPNG(context.Background(), uri)
					if err != nil {
						t.Fatalf("drawing %q: %v", uri, err)
					}
					got := qrtest.Read(t, img)
					if got.Text != uri {
						t.Fatalf("the image of\n %q\nreads\n %q", uri, got.Text)
					}
					mu.Lock()
					k := tallies[kind]
					k.codes++
					k.versions[version(t, img)]++
					if got.GozxingMiss != nil {
						k.misses++
						k.missed = append(k.missed, uri)
					}
					mu.Unlock()
				}
			})
		}
	})
	if t.Failed() {
		return
	}
	var misses int
	for _, kind := range []string{"static", "dynamic"} {
		k := tallies[kind]
		misses += k.misses
		t.Logf("%s: %d codes; zbar read %d/%d exactly; gozxing (default hints) read %d/%d, missed %d (%.2f%%), never another text; images by QR version %v",
			kind, k.codes, k.codes, k.codes, k.codes-k.misses, k.codes, k.misses, 100*float64(k.misses)/float64(max(k.codes, 1)), k.versions)
		for _, uri := range k.missed {
			t.Logf("gozxing missed %q", uri)
		}
	}
	t.Logf("%d codes in %v", n, time.Since(start).Round(time.Millisecond))
	if float64(misses) > maxGozxingMisses*float64(n) {
		t.Fatalf("gozxing found nothing in %d of %d images, more than %.0f%%: the renderer draws worse than it did", misses, n, 100*maxGozxingMisses)
	}
}

// randomCode writes the i-th code: even ones static, odd ones dynamic, each from an emitter
// configured at random within what pixgate's configuration accepts.
func randomCode(t *testing.T, i int) (kind, uri string) {
	cfg := pix.EmitterConfig{PixKey: randomKey(), MerchantName: randomWords(1, 40), MerchantCity: randomWords(1, 20)}
	kind = "static"
	if i%2 == 1 {
		kind = "dynamic"
		cfg.LocationPrefix = randomHost(pix.MaxLocationPrefix-len("/pix/qr/")) + "/pix/qr/"
	}
	e, err := pix.NewEmitter(cfg)
	if err != nil {
		t.Fatalf("emitter %+v: %v", cfg, err)
	}
	code, err := e.Emit(context.Background(), domain.PixCharge{
		TransactionID: randomUUID(), Amount: domain.Cents(1 + randomN(int(domain.MaxAmount))),
	})
	if err != nil {
		t.Fatalf("emit: %v", err)
	}
	return kind, code.URI
}

// version is the QR version of a drawn image, from its side: 17 + 4v modules and a quiet zone
// of 4 on each side, qr.ModulePixels each.
func version(t *testing.T, img []byte) int {
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	return (cfg.Width/qr.ModulePixels - 8 - 17) / 4
}

func randomN(n int) int {
	v, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
	if err != nil {
		panic(err)
	}
	return int(v.Int64())
}

func randomFrom(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[randomN(len(alphabet))]
	}
	return string(b)
}

const (
	lower  = "abcdefghijklmnopqrstuvwxyz"
	digits = "0123456789"
)

// randomKey is a PIX key of each kind DICT knows: e-mail (up to its 77 characters), phone,
// CPF, CNPJ and random (EVP).
func randomKey() string {
	switch randomN(5) {
	case 0:
		local := randomFrom(lower+digits+"._", 1+randomN(40))
		return local + "@" + randomFrom(lower, 1+randomN(20)) + ".com.br"
	case 1:
		return "+55" + randomFrom(digits, 11)
	case 2:
		return randomFrom(digits, 11)
	case 3:
		return randomFrom(digits, 14)
	}
	return randomUUID()
}

// randomWords is a merchant name or city of up to max characters, accents and all (the emitter
// reduces them to ASCII).
func randomWords(lo, hi int) string {
	words := []string{"São", "José", "Padaria", "Mercearia", "do", "da", "Açaí", "Loja", "Conceição", "Ribeirão", "Preto", "Paulo", "Boa", "Vista", "Ótica", "Irmãos"}
	var b strings.Builder
	for n := lo + randomN(hi-lo+1); b.Len() < n; {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[randomN(len(words))])
	}
	return b.String()
}

// randomHost is a public host and port of at most most characters.
func randomHost(most int) string {
	h := "pay." + randomFrom(lower+digits, 1+randomN(20)) + ".example"
	if randomN(2) == 0 {
		h += ":" + strconv.Itoa(1024+randomN(64000))
	}
	if len(h) > most {
		h = h[:most]
	}
	return h
}

func randomUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
