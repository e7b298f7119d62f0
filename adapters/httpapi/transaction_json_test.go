package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// The hand-written encoder of GET /transaction/{id} (transaction_json.go) must write what
// encoding/json writes for the same view, byte for byte: these tests compare both over real
// transactions taken through every status, then over the same transactions with every string
// field replaced by text that needs escaping, and a fuzz target does it for arbitrary text.

// hostileStrings need every kind of escaping encoding/json does, and none.
var hostileStrings = []string{
	"",
	"plain ascii",
	`quote " backslash \ slash /`,
	"controls \x00\x01\x07\b\f\n\r\t\x1f\x7f end",
	"html <script>alert('x')</script> & friends > all",
	"unicode São Paulo, João D'Ávila, 北京, emoji 😀",
	"separators \u2028 and \u2029 and \u2027\u202a",
	"invalid utf-8 \xff\xfe \xc3 \xe2\x80 end\xe2",
	"lone surrogate \xed\xa0\x80 and overlong \xc0\xaf",
}

// jsonTransactionFlows builds real transactions, one snapshot per step, covering every
// transaction status, refunds in each of their statuses, payer and receiver data with masked
// documents and keys, and orders with and without their optional parts.
func jsonTransactionFlows(t testing.TB) []*domain.Transaction {
	t.Helper()
	at := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	var req createTransactionRequest
	if _, fields, err := decodeJSONBytes([]byte(benchCreateBody), &req); err != nil || len(fields) > 0 {
		t.Fatalf("decoding: %v %v", err, fields)
	}
	full, fields := req.parse(at)
	if len(fields) > 0 {
		t.Fatal(fields)
	}
	minimal := domain.Order{Amount: 500, PaymentMethod: full.PaymentMethod, ExpirationSeconds: full.ExpirationSeconds, IsInfoProduct: true}

	var out []*domain.Transaction
	snap := func(tx *domain.Transaction) {
		out = append(out, domain.UnmarshalTransactionFromDatabase(tx.Record()))
	}
	step := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	payer := &domain.AccountHolder{Type: domain.HolderPF, Name: "Maria <Aparecida> & Filhos",
		Document: mustDocument(t, "529.982.247-25"), BankAccount: domain.BankAccount{Type: "CACC", Digit: "7", ISPB: "00000000"},
		Pix: domain.PixKey{Type: domain.PixKeyCPF, Key: "52998224725"}}
	receiver := &domain.AccountHolder{Type: domain.HolderPJ, Name: "Loja Exemplo",
		Document: mustDocument(t, "11.222.333/0001-81"), BankAccount: domain.BankAccount{Type: "TRAN", Digit: "0", ISPB: "18236120"},
		Pix: domain.PixKey{Type: domain.PixKeyEmail, Key: "financeiro@loja.example"}}
	pix := domain.PixResponse{URI: benchBRCode, QRCodePNG: []byte("\x89PNG\r\n\x1a\nqr"), ExpiresAt: at.Add(10 * time.Minute)}

	for n, order := range []domain.Order{full, minimal} {
		id := func(s string) string { return s + "-" + string(rune('a'+n)) }
		newTx := func(name string) *domain.Transaction {
			tx, err := domain.NewTransaction(id(name), "payment-token-0000000000-"+id(name), "acc-1", "SANDBOX", order, domain.Idempotency{Key: id(name)}, at)
			step(err)
			snap(tx) // PENDING
			return tx
		}
		failed := newTx("failed")
		step(failed.FailEmission("acquirer said \"no\" <timeout>", at.Add(time.Second)))
		snap(failed) // FAILED, errorMessage

		expired := newTx("expired")
		step(expired.AttachPix(pix, at.Add(time.Millisecond)))
		snap(expired) // PIX_QRCODE_GENERATED
		step(expired.Expire(at.Add(11 * time.Minute)))
		snap(expired) // FAILED by expiry

		paid := newTx("paid")
		step(paid.AttachPix(pix, at.Add(time.Millisecond)))
		step(paid.Pay(domain.Payment{AmountPaid: order.Amount, PaidAt: at.Add(time.Minute), EndToEnd: "E18236120202603021200abcdef",
			Payer: payer, Receiver: receiver, Fee: 30}, at.Add(time.Minute)))
		snap(paid) // PAID, payer, receiver, fee
		step(paid.RequestRefund(domain.RefundRequest{ID: "D1", Amount: 100, Reason: "cliente & <loja>",
			Idempotency: domain.Idempotency{Key: "r1"}}, at.Add(2*time.Minute)))
		snap(paid) // PROCESSING_REFUND, refund pending
		step(paid.FailRefund("D1", "saldo insuficiente", at.Add(3*time.Minute)))
		snap(paid) // PAID, a failed refund
		step(paid.RequestRefund(domain.RefundRequest{ID: "D2", Amount: 100, Idempotency: domain.Idempotency{Key: "r2"}}, at.Add(4*time.Minute)))
		step(paid.ConfirmRefund("D2", "D18236120202603021204refund", at.Add(5*time.Minute)))
		snap(paid) // PAID, a refund done
		step(paid.RequestRefund(domain.RefundRequest{ID: "D3", Idempotency: domain.Idempotency{Key: "r3"}}, at.Add(6*time.Minute)))
		step(paid.ConfirmRefund("D3", "D18236120202603021206refund", at.Add(7*time.Minute)))
		snap(paid) // REFUNDED

		disputed := newTx("disputed")
		step(disputed.AttachPix(pix, at.Add(time.Millisecond)))
		step(disputed.Pay(domain.Payment{AmountPaid: order.Amount, PaidAt: at.Add(time.Minute), EndToEnd: "E2", Payer: payer}, at.Add(time.Minute)))
		step(disputed.OpenDispute(at.Add(2 * time.Minute)))
		snap(disputed) // BLOCKED, infractionDate
		step(disputed.RejectDispute(at.Add(3 * time.Minute)))
		snap(disputed) // PAID again
		step(disputed.OpenDispute(at.Add(4 * time.Minute)))
		step(disputed.AcceptDispute(at.Add(5 * time.Minute)))
		snap(disputed) // PROCESSING_INFRACTION
		step(disputed.CompleteInfraction("D-med-1", at.Add(6*time.Minute)))
		snap(disputed) // INFRACTION, endToEndRefund
	}
	return out
}

func mustDocument(t testing.TB, s string) domain.Document {
	t.Helper()
	d, err := domain.ParseDocument(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// withStrings returns tx with every free-text field of its record set to s (documents stay
// valid: they are parsed values, masked on the way out).
func withStrings(tx *domain.Transaction, s string) *domain.Transaction {
	r := tx.Record()
	r.ID, r.Acquirer, r.PaymentToken = s+"id", s, s
	o := r.Order
	o.PaymentMethod, o.WebhookURL, o.ExternalCode = domain.PaymentMethod(s), s, s
	if c := o.Customer; c != nil {
		cc := *c
		cc.IP, cc.Name, cc.Email, cc.Landline, cc.MobilePhone = s, s, s, s, s
		o.Customer = &cc
	}
	if sl := o.Seller; sl != nil {
		sc := *sl
		sc.Name = s
		o.Seller = &sc
	}
	if a := o.Address; a != nil {
		ac := *a
		ac.ZipCode, ac.Number, ac.Street, ac.Neighborhood, ac.City, ac.State, ac.Country, ac.Complement = s, s, s, s, s, s, s, s
		o.Address = &ac
	}
	items := make([]domain.Item, len(o.Items))
	for i, it := range o.Items {
		it.Title, it.Description = s, s
		items[i] = it
	}
	o.Items = items
	r.Order = o
	r.Status = domain.TransactionStatus(s)
	history := make([]domain.StatusEntry[domain.TransactionStatus], len(r.History))
	for i, e := range r.History {
		e.Status = domain.TransactionStatus(s)
		history[i] = e
	}
	r.History = history
	if r.Pix != nil {
		p := *r.Pix
		p.URI = s
		r.Pix = &p
	}
	r.ErrorMessage, r.EndToEnd, r.EndToEndRefund = s, s, s
	holder := func(h *domain.AccountHolder) *domain.AccountHolder {
		if h == nil {
			return nil
		}
		c := *h
		c.Type, c.Name = domain.HolderType(s), s
		c.BankAccount = domain.BankAccount{Type: s, Digit: s, ISPB: s}
		if c.Pix.Type != domain.PixKeyCPF {
			c.Pix.Key = s
		}
		return &c
	}
	r.Payer, r.Receiver = holder(r.Payer), holder(r.Receiver)
	refunds := make([]domain.Refund, len(r.Refunds))
	for i, f := range r.Refunds {
		f.ID, f.Reason, f.EndToEndRefund, f.ErrorMessage = s, s, s, s
		f.Status = domain.RefundStatus(s)
		refunds[i] = f
	}
	r.Refunds = refunds
	return domain.UnmarshalTransactionFromDatabase(r)
}

// assertSameJSON checks both encoders on tx's view, and the whole answer of jsonBuffers.writeTransaction
// against writeJSON's.
func assertSameJSON(t *testing.T, tx *domain.Transaction, payBase string) {
	t.Helper()
	v := viewTransaction(tx, payBase)
	want, wantErr := json.Marshal(v)
	got, ok := appendTransactionJSON(nil, &v)
	if (wantErr == nil) != ok {
		t.Fatalf("json.Marshal error %v, hand encoder ok %v", wantErr, ok)
	}
	if ok && !bytes.Equal(got, want) {
		t.Fatalf("hand-written JSON differs from encoding/json's\n got: %s\nwant: %s", got, want)
	}
	wantRec, gotRec := httptest.NewRecorder(), httptest.NewRecorder()
	writeJSON(wantRec, http.StatusOK, v)
	var bufs jsonBuffers
	b := bufs.get()
	// A store that served a view before (the pool's): reset, then built into again.
	_ = viewTransactionInto(tx, "https://earlier.example.com", &b.view)
	b.view.scratch = append(b.view.scratch, "left over from an earlier answer"...)
	b.view.reset()
	pooled := viewTransactionInto(tx, payBase, &b.view)
	bufs.writeTransaction(gotRec, http.StatusOK, &pooled, b)
	if !bytes.Equal(gotRec.Body.Bytes(), wantRec.Body.Bytes()) || gotRec.Code != wantRec.Code ||
		gotRec.Header().Get("Content-Type") != wantRec.Header().Get("Content-Type") {
		t.Fatalf("writeTransaction answered %d %q %s, writeJSON %d %q %s", gotRec.Code, gotRec.Header().Get("Content-Type"),
			gotRec.Body.Bytes(), wantRec.Code, wantRec.Header().Get("Content-Type"), wantRec.Body.Bytes())
	}
	if ok {
		if cl := gotRec.Header().Get("Content-Length"); cl != strconv.Itoa(gotRec.Body.Len()) {
			t.Fatalf("writeTransaction's Content-Length %q, its body %d bytes", cl, gotRec.Body.Len())
		}
	}
}

func TestTransactionJSONMatchesEncodingJSON(t *testing.T) {
	flows := jsonTransactionFlows(t)
	seen := map[domain.TransactionStatus]bool{}
	refundStatuses := map[domain.RefundStatus]bool{}
	for _, tx := range flows {
		seen[tx.Status()] = true
		for _, r := range tx.Refunds() {
			refundStatuses[r.Status] = true
		}
	}
	for _, st := range domain.TransactionStatuses() {
		if !seen[st] && st != domain.TxPending && st != domain.TxBlocked {
			t.Errorf("no transaction in status %s", st)
		}
	}
	if !seen[domain.TxPending] || !seen[domain.TxBlocked] || len(refundStatuses) < 3 {
		t.Errorf("statuses covered %v, refund statuses %v", seen, refundStatuses)
	}
	for _, tx := range flows {
		for _, base := range []string{"", "https://pay.example.com", "https://pay.example.com/a&b<c>"} {
			assertSameJSON(t, tx, base)
		}
		for _, s := range hostileStrings {
			assertSameJSON(t, withStrings(tx, s), "https://pay.example.com/"+s)
		}
	}
}

func TestTransactionJSONMetadata(t *testing.T) {
	tx := jsonTransactionFlows(t)[0]
	for _, meta := range []string{
		`{"campaign":"black-friday","attempt":1}`,
		`{ "spaced" : [ 1, 2 , {"a" : "b c"} ] }`,
		`{"html":"<b>&</b>","sep":"` + "\u2028\u2029" + `","esc":"\u003c\n\"x\""}`,
		"{\"tab\":\t\"x\"\r\n}",
		`[1,2,3]`, `"text"`, `null`, `12.5e3`,
		`{"broken":`, `{"a":1}x`, `{"a":'single'}`, "{\"bad\":\"\xff\"}",
	} {
		r := tx.Record()
		r.Order.Metadata = json.RawMessage(meta)
		t.Run(meta, func(t *testing.T) { assertSameJSON(t, domain.UnmarshalTransactionFromDatabase(r), "") })
	}
}

// FuzzTransactionJSON compares both encoders on real transactions whose text fields and
// metadata carry arbitrary bytes.
//
//	go test -run '^$' -fuzz FuzzTransactionJSON -fuzztime 30s ./adapters/httpapi/
func FuzzTransactionJSON(f *testing.F) {
	for _, s := range hostileStrings {
		f.Add(s, `{"a":1}`, uint8(0))
	}
	f.Add("x", `{ "a" : "<&>" }`, uint8(7))
	f.Add(strings.Repeat("é\u2028", 40), `[ ]`, uint8(13))
	flows := jsonTransactionFlows(f)
	f.Fuzz(func(t *testing.T, s, meta string, pick uint8) {
		tx := withStrings(flows[int(pick)%len(flows)], s)
		r := tx.Record()
		r.Order.Metadata = json.RawMessage(meta)
		assertSameJSON(t, domain.UnmarshalTransactionFromDatabase(r), s)
	})
}

// TestISOTimeMatchesMarshalText compares the hand-written time writer with isoTime's
// MarshalText as encoding/json writes it, over ordinary instants, every millisecond digit,
// other zones, and years Format writes unpadded or signed.
func TestISOTimeMatchesMarshalText(t *testing.T) {
	sp := time.FixedZone("BRT", -3*3600)
	times := []time.Time{
		{}, time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC), time.Date(2026, 12, 31, 23, 59, 59, 999_999_999, sp),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 6, 15, 8, 7, 6, 5_000_000, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 2, 29, 3, 4, 5, 67_800_000, sp),
	}
	for ns := int64(0); ns < 1000; ns++ {
		times = append(times, time.Unix(1_772_000_000+ns*86_399, ns*1_000_999).In(sp))
	}
	for _, tm := range times {
		want, err := json.Marshal(isoTime(tm))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendISOTime(nil, isoTime(tm)); !bytes.Equal(got, want) {
			t.Fatalf("%v: got %s, want %s", tm, got, want)
		}
	}
}

// FuzzISOTime compares the hand-written time writer with MarshalText at arbitrary instants.
func FuzzISOTime(f *testing.F) {
	f.Add(int64(1_772_000_000), int64(123_456_789))
	f.Add(int64(-62_135_596_800), int64(0))
	f.Add(int64(253_402_300_799), int64(999_999_999))
	f.Fuzz(func(t *testing.T, sec, nsec int64) {
		tm := time.Unix(sec, nsec)
		want, err := json.Marshal(isoTime(tm))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendISOTime(nil, isoTime(tm)); !bytes.Equal(got, want) {
			t.Fatalf("%v: got %s, want %s", tm, got, want)
		}
	})
}
