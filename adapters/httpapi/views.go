package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// The response shapes of docs/API.md, Response shapes, field by field and in its order.
// Optional fields are left out when they have no value, except paymentDate, infractionDate and
// errorMessage, which are null until they have one.

// isoTime writes times as RFC 3339 in UTC with millisecond precision.
type isoTime time.Time

func (t isoTime) MarshalText() ([]byte, error) {
	return time.Time(t).UTC().AppendFormat(make([]byte, 0, 24), "2006-01-02T15:04:05.000Z"), nil
}

func isoPtr(t *time.Time) *isoTime {
	if t == nil {
		return nil
	}
	v := isoTime(*t)
	return &v
}

func nullableString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

type documentView struct {
	Value string `json:"value"`
	Type  string `json:"type"`
}

func viewDocument(d domain.Document) documentView {
	return documentView{Value: d.Masked(), Type: string(d.Kind())}
}

type customerView struct {
	IP          string       `json:"ip,omitempty"`
	Name        string       `json:"name"`
	Email       string       `json:"email"`
	Document    documentView `json:"document"`
	Landline    string       `json:"landline,omitempty"`
	MobilePhone string       `json:"mobilePhone,omitempty"`
}

type sellerView struct {
	Name     string       `json:"name"`
	Document documentView `json:"document"`
}

type addressView struct {
	ZipCode      string `json:"zipCode"`
	Number       string `json:"number"`
	Street       string `json:"street"`
	Neighborhood string `json:"neighborhood"`
	City         string `json:"city"`
	State        string `json:"state"`
	Country      string `json:"country"`
	Complement   string `json:"complement,omitempty"`
}

type itemView struct {
	Title       string `json:"title"`
	UnitPrice   int64  `json:"unitPrice"`
	Quantity    int    `json:"quantity"`
	Description string `json:"description,omitempty"`
}

type statusEntryView struct {
	Status                 string  `json:"status"`
	Date                   isoTime `json:"date"`
	DurationInMilliseconds *int64  `json:"durationInMilliseconds"`
}

func viewHistory[S ~string](h []domain.StatusEntry[S]) []statusEntryView {
	out := make([]statusEntryView, len(h))
	for i, e := range h {
		out[i] = statusEntryView{Status: string(e.Status), Date: isoTime(e.Date), DurationInMilliseconds: domain.DurationMillis(h, i)}
	}
	return out
}

type pixResponseView struct {
	URI            string     `json:"uri"`
	QRCodeBase64   pngDataURI `json:"qrCodeBase64"`
	ExpirationDate isoTime    `json:"expirationDate"`
}

// pngDataURI is a PNG shown as a data URI string (dataURI): encoding/json writes it through
// MarshalText, and the hand-written encoder of transaction_json.go encodes the image straight
// into its buffer, without the copy.
type pngDataURI []byte

func (p pngDataURI) MarshalText() ([]byte, error) { return appendDataURI(nil, p), nil }

func viewPix(p *domain.PixResponse) *pixResponseView {
	if p == nil {
		return nil
	}
	return &pixResponseView{
		URI:            p.URI,
		QRCodeBase64:   pngDataURI(p.QRCodePNG),
		ExpirationDate: isoTime(p.ExpiresAt),
	}
}

const dataURIPrefix = "data:image/png;base64,"

// dataURI writes a PNG as a data URI.
func dataURI(png []byte) string {
	return string(appendDataURI(nil, png))
}

// appendDataURI appends png as a data URI, growing b at most once.
func appendDataURI(b, png []byte) []byte {
	b = slices.Grow(b, len(dataURIPrefix)+base64.StdEncoding.EncodedLen(len(png)))
	return base64.StdEncoding.AppendEncode(append(b, dataURIPrefix...), png)
}

type bankAccountView struct {
	Type  string `json:"type"`
	Digit string `json:"digit"`
	ISPB  string `json:"ispb"`
}

type pixKeyView struct {
	Key  string `json:"key"`
	Type string `json:"type"`
}

type accountHolderView struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Document    string          `json:"document"`
	BankAccount bankAccountView `json:"bankAccount"`
	Pix         pixKeyView      `json:"pix"`
}

// viewPixKey masks a CPF key like any CPF; other keys are shown as they are.
func viewPixKey(k domain.PixKey) pixKeyView {
	key := k.Key
	if k.Type == domain.PixKeyCPF {
		if d, err := domain.ParseDocument(k.Key); err == nil {
			key = d.Masked()
		}
	}
	return pixKeyView{Key: key, Type: string(k.Type)}
}

func viewHolder(h *domain.AccountHolder) *accountHolderView {
	if h == nil {
		return nil
	}
	return &accountHolderView{
		Type: string(h.Type), Name: h.Name, Document: h.Document.Masked(),
		BankAccount: bankAccountView{Type: h.BankAccount.Type, Digit: h.BankAccount.Digit, ISPB: h.BankAccount.ISPB},
		Pix:         viewPixKey(h.Pix),
	}
}

func centsPtr(c *domain.Cents) *int64 {
	if c == nil {
		return nil
	}
	v := int64(*c)
	return &v
}

// transactionView is a transaction as list and lookup return it (docs/API.md, Response shapes).
type transactionView struct {
	ID             string             `json:"id"`
	Acquirer       string             `json:"acquirer"`
	Amount         int64              `json:"amount"`
	PaymentMethod  string             `json:"paymentMethod"`
	WebhookURL     string             `json:"webhookUrl,omitempty"`
	ExternalCode   string             `json:"externalCode,omitempty"`
	Customer       *customerView      `json:"customer,omitempty"`
	Seller         *sellerView        `json:"seller,omitempty"`
	IsInfoProduct  bool               `json:"isInfoProduct"`
	Address        *addressView       `json:"address,omitempty"`
	Items          []itemView         `json:"items,omitempty"`
	Metadata       json.RawMessage    `json:"metadata,omitempty"`
	CreatedAt      isoTime            `json:"createdAt"`
	Status         string             `json:"status"`
	StatusHistory  []statusEntryView  `json:"statusHistory"`
	UpdatedAt      isoTime            `json:"updatedAt"`
	AmountPaid     *int64             `json:"amountPaid,omitempty"`
	PaymentDate    *isoTime           `json:"paymentDate"`
	InfractionDate *isoTime           `json:"infractionDate"`
	PixResponse    *pixResponseView   `json:"pixResponse,omitempty"`
	PaymentURL     string             `json:"paymentUrl,omitempty"`
	ErrorMessage   *string            `json:"errorMessage"`
	EndToEnd       string             `json:"endToEnd,omitempty"`
	EndToEndRefund string             `json:"endToEndRefund,omitempty"`
	Payer          *accountHolderView `json:"payer,omitempty"`
	Receiver       *accountHolderView `json:"receiver,omitempty"`
	FeeAmount      *int64             `json:"feeAmount,omitempty"`
	AmountRefunded int64              `json:"amountRefunded"`
	Refunds        []refundView       `json:"refunds"`
}

// refundView is one refund of a transaction. Unlike the transaction's optional fields, the
// refund's are always present, null until they have a value.
type refundView struct {
	ID             string   `json:"id"`
	Amount         int64    `json:"amount"`
	Reason         *string  `json:"reason"`
	Status         string   `json:"status"`
	EndToEndRefund *string  `json:"endToEndRefund"`
	ErrorMessage   *string  `json:"errorMessage"`
	CreatedAt      isoTime  `json:"createdAt"`
	CompletedAt    *isoTime `json:"completedAt"`
}

// viewRefunds lists a transaction's refunds oldest first; [] (never null) before any.
func viewRefunds(refunds []domain.Refund) []refundView {
	out := make([]refundView, len(refunds))
	for i, r := range refunds {
		out[i] = refundView{
			ID: r.ID, Amount: int64(r.Amount), Reason: nullableString(r.Reason), Status: string(r.Status),
			EndToEndRefund: nullableString(r.EndToEndRefund), ErrorMessage: nullableString(r.ErrorMessage),
			CreatedAt: isoTime(r.CreatedAt), CompletedAt: isoPtr(r.CompletedAt),
		}
	}
	return out
}

// viewTransaction shows t; payBase is the base of its hosted payment page's address
// (Config.PublicURL).
func viewTransaction(t *domain.Transaction, payBase string) transactionView {
	return viewTransactionInto(t, payBase, new(viewStore))
}

// viewStore holds what a transactionView points at: its byte contents (the metadata and the
// QR image), its parts and its lists. GET /transaction/{id} lends one with its answer buffer
// (transaction_json.go), so that a lookup reuses the memory of an earlier one instead of
// allocating it; a view built into a store is valid until the store is reset or reused.
type viewStore struct {
	scratch   []byte
	customer  customerView
	seller    sellerView
	address   addressView
	pix       pixResponseView
	items     []itemView
	history   []statusEntryView
	durations []int64
}

// reset empties st for its next view, keeping the capacity of its slices but nothing that
// points at a transaction's memory.
func (st *viewStore) reset() {
	clear(st.items)
	clear(st.history)
	*st = viewStore{scratch: st.scratch[:0], items: st.items[:0], history: st.history[:0], durations: st.durations[:0]}
}

// viewTransactionInto is viewTransaction built into st (viewStore), which must be empty.
func viewTransactionInto(t *domain.Transaction, payBase string, st *viewStore) transactionView {
	rd := t.Reading()
	v := transactionView{
		ID: t.ID(), Acquirer: t.Acquirer(), Amount: int64(t.Amount()), PaymentMethod: string(rd.PaymentMethod()),
		WebhookURL: rd.WebhookURL(), ExternalCode: rd.ExternalCode(), IsInfoProduct: rd.IsInfoProduct(),
		CreatedAt: isoTime(t.CreatedAt()), Status: string(t.Status()), UpdatedAt: isoTime(t.UpdatedAt()),
		AmountPaid: centsPtr(t.AmountPaid()), PaymentDate: isoPtr(t.PaymentDate()),
		InfractionDate: isoPtr(t.InfractionDate()),
		PaymentURL:     paymentURL(payBase, t.PaymentToken()), ErrorMessage: nullableString(t.ErrorMessage()), EndToEnd: t.EndToEnd(),
		EndToEndRefund: t.EndToEndRefund(), Payer: viewHolder(t.Payer()),
		Receiver: viewHolder(t.Receiver()), FeeAmount: centsPtr(t.FeeAmount()),
		AmountRefunded: int64(t.AmountRefunded()), Refunds: viewRefunds(t.Refunds()),
	}
	n := rd.StatusCount()
	st.history, st.durations = slices.Grow(st.history, n), slices.Grow(st.durations, n) // no growth below: the pointers stay
	for i := range n {
		e := rd.StatusEntry(i)
		entry := statusEntryView{Status: string(e.Status), Date: isoTime(e.Date)}
		if d, ok := rd.StatusDurationMillis(i); ok {
			st.durations = append(st.durations, d)
			entry.DurationInMilliseconds = &st.durations[len(st.durations)-1]
		}
		st.history = append(st.history, entry)
	}
	v.StatusHistory = st.history[:n:n]
	if c, ok := rd.Customer(); ok {
		st.customer = customerView{IP: c.IP, Name: c.Name, Email: c.Email, Document: viewDocument(c.Document),
			Landline: c.Landline, MobilePhone: c.MobilePhone}
		v.Customer = &st.customer
	}
	if s, ok := rd.Seller(); ok {
		st.seller = sellerView{Name: s.Name, Document: viewDocument(s.Document)}
		v.Seller = &st.seller
	}
	if a, ok := rd.Address(); ok {
		st.address = addressView{ZipCode: a.ZipCode, Number: a.Number, Street: a.Street,
			Neighborhood: a.Neighborhood, City: a.City, State: a.State, Country: a.Country, Complement: a.Complement}
		v.Address = &st.address
	}
	if n := rd.ItemCount(); n > 0 {
		for i := range n {
			it := rd.Item(i)
			st.items = append(st.items, itemView{Title: it.Title, UnitPrice: int64(it.UnitPrice), Quantity: it.Quantity, Description: it.Description})
		}
		v.Items = st.items[:n:n]
	}
	if rd.HasMetadata() {
		start := len(st.scratch)
		st.scratch = rd.AppendMetadata(st.scratch)
		v.Metadata = json.RawMessage(st.scratch[start:len(st.scratch):len(st.scratch)])
	}
	if rd.HasPix() {
		start := len(st.scratch)
		st.scratch = rd.AppendQRCodePNG(st.scratch)
		st.pix = pixResponseView{
			URI:            rd.PixURI(),
			QRCodeBase64:   pngDataURI(st.scratch[start:len(st.scratch):len(st.scratch)]),
			ExpirationDate: isoTime(rd.PixExpiresAt()),
		}
		v.PixResponse = &st.pix
	}
	return v
}

// createdTransactionView is the 201 body of POST /transaction, exactly as docs/API.md,
// Creating a transaction lists it (paymentUrl included). A replay rebuilds it from the stored transaction, byte for
// byte the same.
type createdTransactionView struct {
	ID           string           `json:"id"`
	ExternalCode string           `json:"externalCode,omitempty"`
	Amount       int64            `json:"amount"`
	Type         string           `json:"type"`
	Status       string           `json:"status"`
	PixResponse  *pixResponseView `json:"pixResponse,omitempty"`
	PaymentURL   string           `json:"paymentUrl,omitempty"`
}

func viewCreatedTransaction(t *domain.Transaction, payBase string) createdTransactionView {
	return createdTransactionView{
		ID: t.ID(), ExternalCode: t.Order().ExternalCode, Amount: int64(t.Amount()), Type: "TRANSACTION",
		Status: string(domain.TxPixQRCodeGenerated), PixResponse: viewPix(t.Pix()),
		PaymentURL: paymentURL(payBase, t.PaymentToken()),
	}
}

// paymentURL is the address of a transaction's hosted payment page, base + "/pay/" + token;
// "" (left out of answers) for a transaction without a token, which no store keeps once it
// has started.
func paymentURL(base, token string) string {
	if token == "" || base == "" {
		return ""
	}
	return base + "/pay/" + token
}

type listView struct {
	Total       int               `json:"total"`
	TotalPages  int               `json:"totalPages"`
	CurrentPage int               `json:"currentPage"`
	PerPage     int               `json:"perPage"`
	Data        []transactionView `json:"data"`
}
