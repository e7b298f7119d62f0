package mongo

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// A transaction document: txDoc (txFields, its outbox and its pending postings).

type customerDoc struct {
	IP          string       `bson:"ip,omitempty"`
	Name        string       `bson:"name"`
	Email       string       `bson:"email,omitempty"`
	Document    *documentDoc `bson:"document,omitempty"`
	Landline    string       `bson:"landline,omitempty"`
	MobilePhone string       `bson:"mobilePhone,omitempty"`
	Birthdate   string       `bson:"birthdate,omitempty"`
}

type sellerDoc struct {
	Name     string       `bson:"name"`
	Document *documentDoc `bson:"document,omitempty"`
}

type addressDoc struct {
	ZipCode      string `bson:"zipCode"`
	Number       string `bson:"number"`
	Street       string `bson:"street"`
	Neighborhood string `bson:"neighborhood"`
	City         string `bson:"city"`
	State        string `bson:"state"`
	Country      string `bson:"country"`
	Complement   string `bson:"complement,omitempty"`
}

type itemDoc struct {
	Title       string `bson:"title"`
	Description string `bson:"description,omitempty"`
	UnitPrice   int64  `bson:"unitPrice"`
	Quantity    int    `bson:"quantity"`
}

type pixDoc struct {
	URI       string    `bson:"uri"`
	QRCodePNG []byte    `bson:"qrCodePng"`
	ExpiresAt time.Time `bson:"expiresAt"`
	// A dynamic charge's location (transactions_pix.go); static charges, and documents written
	// before dynamic charges existed, have none of the three, which the sparse unique indexes
	// leave out.
	Location string `bson:"location,omitempty"`
	LocKey   string `bson:"locKey,omitempty"`
	CobTxID  string `bson:"cobTxid,omitempty"`
	// PSP is the charge the PSP made (its txid is CobTxID, and it has no location of
	// pixgate's); absent when pixgate wrote the code itself.
	PSP *pspChargeDoc `bson:"psp,omitempty"`
}

// pspChargeDoc is domain.PSPCharge.
type pspChargeDoc struct {
	LocationID int64     `bson:"locId"`
	Location   string    `bson:"location"`
	Revision   int       `bson:"revision"`
	CreatedAt  time.Time `bson:"createdAt"`
}

// searchDoc holds normalised copies of what the list filters match and the stored fields do
// not hold in a directly comparable form: the e-mail and name lower-cased (FerretDB has no
// collations, so no case-insensitive index), both phones in one array (one multikey index
// serves "landline or mobile"). Written with every change, never read back.
type searchDoc struct {
	Email  string   `bson:"email,omitempty"`
	Name   string   `bson:"name,omitempty"`
	Phones []string `bson:"phones,omitempty"`
}

// payKey is the value of the unique payKey index, by which the hosted payment page finds a
// transaction: "tok:" and the SHA-256 of its payment token, so that the index compares a hash
// of the secret and never the secret itself (a B-tree look-up compares keys byte by byte: a
// timing difference could only tell how much of a hash matched, which says nothing about any
// token). A transaction without a token (none is written so, see MigratePaymentTokens) gets
// "id:" and its id, which is unique too, so that documents never collide on a missing key.
func payKey(token, id string) string {
	if token == "" {
		return "id:" + id
	}
	sum := sha256.Sum256([]byte(token))
	return "tok:" + hex.EncodeToString(sum[:])
}

// txFields are the fields of a transaction document that change with the aggregate. Update
// writes them all with $set (no omitempty here, so that a cleared field is overwritten rather
// than left behind), never touching _id or the outbox fields that dispatchers change
// concurrently.
type txFields struct {
	AccountID       string       `bson:"accountId"`
	Acquirer        string       `bson:"acquirer"`
	Idem            string       `bson:"idem"`
	IdemKey         string       `bson:"idemKey"`
	IdemFingerprint string       `bson:"idemFingerprint"`
	PayToken        string       `bson:"payToken"` // the payment page's token, to build its URL
	PayKey          string       `bson:"payKey"`   // payKey(PayToken, _id), the look-up key
	CreatedAt       time.Time    `bson:"createdAt"`
	UpdatedAt       time.Time    `bson:"updatedAt"`
	Status          string       `bson:"status"`
	History         []historyDoc `bson:"history"`

	Amount            int64        `bson:"amount"`
	PaymentMethod     string       `bson:"paymentMethod"`
	WebhookURL        string       `bson:"webhookUrl"`
	ExternalCode      string       `bson:"externalCode"`
	Customer          *customerDoc `bson:"customer"`
	Seller            *sellerDoc   `bson:"seller"`
	IsInfoProduct     bool         `bson:"isInfoProduct"`
	Address           *addressDoc  `bson:"address"`
	Items             []itemDoc    `bson:"items"`
	Metadata          string       `bson:"metadata"` // the merchant's JSON object, compact; "" when absent
	ExpirationSeconds int          `bson:"expirationSeconds"`

	Pix            *pixDoc    `bson:"pix"`
	AmountPaid     *int64     `bson:"amountPaid"`
	PaymentDate    *time.Time `bson:"paymentDate"`
	InfractionDate *time.Time `bson:"infractionDate"`
	ErrorMessage   string     `bson:"errorMessage"`
	EndToEnd       string     `bson:"endToEnd"`
	EndToEndRefund string     `bson:"endToEndRefund"`
	Payer          *holderDoc `bson:"payer"`
	Receiver       *holderDoc `bson:"receiver"`
	FeeAmount      *int64     `bson:"feeAmount"`

	// Refunds are the transaction's refunds, oldest first. Documents written before refunds
	// were kept have none (see legacyRefund).
	Refunds []refundDoc `bson:"refunds"`
	// DevolutionDue is the due time of the devolution of the refund in progress
	// (domain.Transaction.DevolutionDue), kept at the top for ListDevolutionsDue's index; null
	// when nothing is due.
	DevolutionDue *time.Time `bson:"devolutionDue"`

	Search  searchDoc `bson:"search"`
	Version int64     `bson:"version"`
}

// refundDoc is one refund of a transaction.
type refundDoc struct {
	ID              string     `bson:"id"`
	Amount          int64      `bson:"amount"`
	Reason          string     `bson:"reason"`
	Status          string     `bson:"status"`
	EndToEndRefund  string     `bson:"endToEndRefund"`
	ErrorMessage    string     `bson:"errorMessage"`
	CreatedAt       time.Time  `bson:"createdAt"`
	CompletedAt     *time.Time `bson:"completedAt"`
	IdemKey         string     `bson:"idemKey"`
	IdemFingerprint string     `bson:"idemFingerprint"`
	Step            int        `bson:"step"`
	// The devolution outbox's state (domain.DevolutionDispatch).
	DevolutionDue    *time.Time `bson:"devolutionDue"`
	DevolutionClaims int        `bson:"devolutionClaims"`
}

func fromRefunds(rs []domain.Refund) []refundDoc {
	if len(rs) == 0 {
		return nil
	}
	out := make([]refundDoc, len(rs))
	for i, r := range rs {
		out[i] = refundDoc{
			ID: r.ID, Amount: int64(r.Amount), Reason: r.Reason, Status: string(r.Status),
			EndToEndRefund: r.EndToEndRefund, ErrorMessage: r.ErrorMessage, CreatedAt: r.CreatedAt,
			CompletedAt: r.CompletedAt, IdemKey: r.Idempotency.Key, IdemFingerprint: r.Idempotency.Fingerprint,
			Step: r.Step, DevolutionDue: r.Dispatch.Due, DevolutionClaims: r.Dispatch.Claims,
		}
	}
	return out
}

func toRefunds(ds []refundDoc) ([]domain.Refund, error) {
	if len(ds) == 0 {
		return nil, nil
	}
	out := make([]domain.Refund, len(ds))
	for i, d := range ds {
		status, err := domain.ParseRefundStatus(d.Status)
		if err != nil {
			return nil, fmt.Errorf("stored refund %s: %w", d.ID, err)
		}
		out[i] = domain.Refund{
			ID: d.ID, Amount: domain.Cents(d.Amount), Reason: d.Reason, Status: status,
			EndToEndRefund: d.EndToEndRefund, ErrorMessage: d.ErrorMessage, CreatedAt: d.CreatedAt.UTC(),
			CompletedAt: utcPtr(d.CompletedAt), Idempotency: domain.Idempotency{Key: d.IdemKey, Fingerprint: d.IdemFingerprint},
			Step: d.Step, Dispatch: domain.DevolutionDispatch{Due: utcPtr(d.DevolutionDue), Claims: d.DevolutionClaims},
		}
	}
	return out, nil
}

// legacyRefund is the refund a transaction stored before refunds were kept had, when it was in
// a refund (PROCESSING_REFUND) or refunded (REFUNDED): the previous version refunded the whole
// amount paid, once, and kept only the transaction's status and endToEndRefund. Rebuilding it
// on read lets such a transaction be confirmed, failed and audited like any other
// (domain.ImpliedTransactionPostings finds its refund by the history step). Its id derives from
// the transaction's, so every read, and every instance, names it the same; the first status
// change stores it for good. ok is false for every other transaction.
func legacyRefund(r domain.TransactionRecord) (domain.Refund, bool) {
	if len(r.Refunds) > 0 || (r.Status != domain.TxProcessingRefund && r.Status != domain.TxRefunded) || r.AmountPaid == nil {
		return domain.Refund{}, false
	}
	step := -1
	for i, h := range r.History {
		if h.Status == domain.TxProcessingRefund {
			step = i
		}
	}
	if step < 0 {
		return domain.Refund{}, false
	}
	sum := sha256.Sum256([]byte("legacy-refund/" + r.ID))
	rf := domain.Refund{
		ID: hex.EncodeToString(sum[:])[:32], Amount: *r.AmountPaid, Status: domain.RefundProcessing,
		CreatedAt: r.History[step].Date, Step: step,
	}
	if r.Status == domain.TxRefunded {
		rf.Status, rf.EndToEndRefund = domain.RefundRefunded, r.EndToEndRefund
		if step+1 < len(r.History) {
			at := r.History[step+1].Date
			rf.CompletedAt = &at
		}
	}
	return rf, true
}

// txDoc is a stored transaction.
type txDoc struct {
	ID     string       `bson:"_id"`
	Fields txFields     `bson:",inline"`
	Box    outboxFields `bson:",inline"`
	Ledger ledgerFields `bson:",inline"`
}

// txSnapshot is a transaction as an event carries it: the aggregate without its outbox.
type txSnapshot struct {
	ID     string   `bson:"_id"`
	Fields txFields `bson:",inline"`
}

func fromTransaction(t *domain.Transaction) txSnapshot {
	r := t.Record()
	o := r.Order
	f := txFields{
		AccountID: r.AccountID, Acquirer: r.Acquirer,
		Idem: idemSlot(r.Idempotency.Key, r.ID), IdemKey: r.Idempotency.Key, IdemFingerprint: r.Idempotency.Fingerprint,
		PayToken: r.PaymentToken, PayKey: payKey(r.PaymentToken, r.ID),
		CreatedAt: r.CreatedAt, UpdatedAt: t.UpdatedAt(), Status: string(r.Status), History: fromHistory(r.History),
		Amount: int64(o.Amount), PaymentMethod: string(o.PaymentMethod), WebhookURL: o.WebhookURL,
		ExternalCode: o.ExternalCode, IsInfoProduct: o.IsInfoProduct, Metadata: string(o.Metadata),
		ExpirationSeconds: o.ExpirationSeconds,
		AmountPaid:        cents(r.AmountPaid), PaymentDate: r.PaymentDate, InfractionDate: r.InfractionDate,
		ErrorMessage: r.ErrorMessage, EndToEnd: r.EndToEnd, EndToEndRefund: r.EndToEndRefund,
		Payer: fromHolder(r.Payer), Receiver: fromHolder(r.Receiver), FeeAmount: cents(r.FeeAmount),
		Refunds: fromRefunds(r.Refunds), DevolutionDue: t.DevolutionDue(), Version: r.Version,
	}
	if c := o.Customer; c != nil {
		f.Customer = &customerDoc{IP: c.IP, Name: c.Name, Email: c.Email, Document: fromDocument(c.Document),
			Landline: c.Landline, MobilePhone: c.MobilePhone, Birthdate: c.Birthdate}
		f.Search = searchDoc{Email: strings.ToLower(c.Email), Name: strings.ToLower(c.Name)}
		for _, p := range []string{c.Landline, c.MobilePhone} {
			if p != "" {
				f.Search.Phones = append(f.Search.Phones, p)
			}
		}
	}
	if s := o.Seller; s != nil {
		f.Seller = &sellerDoc{Name: s.Name, Document: fromDocument(s.Document)}
	}
	if a := o.Address; a != nil {
		f.Address = &addressDoc{ZipCode: a.ZipCode, Number: a.Number, Street: a.Street, Neighborhood: a.Neighborhood,
			City: a.City, State: a.State, Country: a.Country, Complement: a.Complement}
	}
	if o.Items != nil {
		f.Items = make([]itemDoc, len(o.Items))
		for i, it := range o.Items {
			f.Items[i] = itemDoc{Title: it.Title, Description: it.Description, UnitPrice: int64(it.UnitPrice), Quantity: it.Quantity}
		}
	}
	if p := r.Pix; p != nil {
		f.Pix = &pixDoc{URI: p.URI, QRCodePNG: p.QRCodePNG, ExpiresAt: p.ExpiresAt,
			Location: p.Location.ID, LocKey: locKey(p.Location.ID), CobTxID: p.Location.CobTxID}
		if c := p.PSP; !c.IsZero() {
			f.Pix.PSP = &pspChargeDoc{LocationID: c.LocationID, Location: c.Location, Revision: c.Revision, CreatedAt: c.CreatedAt}
		}
	}
	return txSnapshot{ID: r.ID, Fields: f}
}

func (d *txSnapshot) toTransaction() (*domain.Transaction, error) {
	f := d.Fields
	order := domain.Order{
		Amount: domain.Cents(f.Amount), PaymentMethod: domain.PaymentMethod(f.PaymentMethod),
		WebhookURL: f.WebhookURL, ExternalCode: f.ExternalCode, IsInfoProduct: f.IsInfoProduct,
		ExpirationSeconds: f.ExpirationSeconds,
	}
	if f.Metadata != "" {
		order.Metadata = []byte(f.Metadata)
	}
	if c := f.Customer; c != nil {
		doc, err := c.Document.toDocument()
		if err != nil {
			return nil, err
		}
		order.Customer = &domain.Customer{IP: c.IP, Name: c.Name, Email: c.Email, Document: doc,
			Landline: c.Landline, MobilePhone: c.MobilePhone, Birthdate: c.Birthdate}
	}
	if s := f.Seller; s != nil {
		doc, err := s.Document.toDocument()
		if err != nil {
			return nil, err
		}
		order.Seller = &domain.Seller{Name: s.Name, Document: doc}
	}
	if a := f.Address; a != nil {
		order.Address = &domain.Address{ZipCode: a.ZipCode, Number: a.Number, Street: a.Street, Neighborhood: a.Neighborhood,
			City: a.City, State: a.State, Country: a.Country, Complement: a.Complement}
	}
	if f.Items != nil {
		order.Items = make([]domain.Item, len(f.Items))
		for i, it := range f.Items {
			order.Items[i] = domain.Item{Title: it.Title, Description: it.Description, UnitPrice: domain.Cents(it.UnitPrice), Quantity: it.Quantity}
		}
	}
	payer, err := f.Payer.toHolder()
	if err != nil {
		return nil, err
	}
	receiver, err := f.Receiver.toHolder()
	if err != nil {
		return nil, err
	}
	status, err := domain.ParseTransactionStatus(f.Status)
	if err != nil {
		return nil, fmt.Errorf("stored transaction %s: %w", d.ID, err)
	}
	history, err := toHistory(f.History, domain.ParseTransactionStatus)
	if err != nil {
		return nil, fmt.Errorf("stored transaction %s: %w", d.ID, err)
	}
	refunds, err := toRefunds(f.Refunds)
	if err != nil {
		return nil, fmt.Errorf("stored transaction %s: %w", d.ID, err)
	}
	r := domain.TransactionRecord{
		ID: d.ID, AccountID: f.AccountID, Acquirer: f.Acquirer, Order: order, PaymentToken: f.PayToken,
		Idempotency: domain.Idempotency{Key: f.IdemKey, Fingerprint: f.IdemFingerprint},
		CreatedAt:   f.CreatedAt, Status: status, History: history,
		AmountPaid: toCents(f.AmountPaid), PaymentDate: utcPtr(f.PaymentDate), InfractionDate: utcPtr(f.InfractionDate),
		ErrorMessage: f.ErrorMessage, EndToEnd: f.EndToEnd, EndToEndRefund: f.EndToEndRefund,
		Payer: payer, Receiver: receiver, FeeAmount: toCents(f.FeeAmount), Refunds: refunds, Version: f.Version,
	}
	if p := f.Pix; p != nil {
		r.Pix = &domain.PixResponse{URI: p.URI, QRCodePNG: p.QRCodePNG, ExpiresAt: p.ExpiresAt.UTC(),
			Location: domain.PixLocation{ID: p.Location, CobTxID: p.CobTxID}}
		if c := p.PSP; c != nil {
			r.Pix.PSP = domain.PSPCharge{LocationID: c.LocationID, Location: c.Location, Revision: c.Revision, CreatedAt: c.CreatedAt.UTC()}
		}
	}
	if rf, ok := legacyRefund(r); ok {
		r.Refunds = []domain.Refund{rf}
	}
	return domain.UnmarshalTransactionFromDatabase(r), nil
}
