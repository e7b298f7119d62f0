package mongo

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// The documents below are the storage shapes of the aggregates: plain structs with bson tags,
// mapped by hand to and from the domain so that the domain never learns about BSON. Field names
// are part of the stored format (and of the index definitions in indexes.go): renaming one
// needs a migration.

// documentDoc is a CPF or CNPJ.
type documentDoc struct {
	Kind  string `bson:"kind"`
	Value string `bson:"value"`
}

func fromDocument(d domain.Document) *documentDoc {
	if d.IsZero() {
		return nil
	}
	return &documentDoc{Kind: string(d.Kind()), Value: d.Value()}
}

// toDocument rebuilds a document. The domain offers no unvalidated path for documents, so a
// stored value is parsed again; it was valid when written, so a failure means the data was
// changed behind the program's back.
func (d *documentDoc) toDocument() (domain.Document, error) {
	if d == nil || d.Value == "" {
		return domain.Document{}, nil
	}
	doc, err := domain.ParseDocument(d.Value)
	if err != nil {
		return domain.Document{}, fmt.Errorf("stored document %q: %w", d.Value, err)
	}
	return doc, nil
}

type pixKeyDoc struct {
	Type string `bson:"type"`
	Key  string `bson:"key"`
}

type bankAccountDoc struct {
	Type  string `bson:"type,omitempty"`
	Digit string `bson:"digit,omitempty"`
	ISPB  string `bson:"ispb,omitempty"`
}

type holderDoc struct {
	Type        string         `bson:"type"`
	Name        string         `bson:"name"`
	Document    *documentDoc   `bson:"document,omitempty"`
	BankAccount bankAccountDoc `bson:"bankAccount"`
	Pix         pixKeyDoc      `bson:"pix"`
}

func fromHolder(h *domain.AccountHolder) *holderDoc {
	if h == nil {
		return nil
	}
	return &holderDoc{
		Type: string(h.Type), Name: h.Name, Document: fromDocument(h.Document),
		BankAccount: bankAccountDoc{Type: h.BankAccount.Type, Digit: h.BankAccount.Digit, ISPB: h.BankAccount.ISPB},
		Pix:         pixKeyDoc{Type: string(h.Pix.Type), Key: h.Pix.Key},
	}
}

func (h *holderDoc) toHolder() (*domain.AccountHolder, error) {
	if h == nil {
		return nil, nil
	}
	doc, err := h.Document.toDocument()
	if err != nil {
		return nil, err
	}
	return &domain.AccountHolder{
		Type: domain.HolderType(h.Type), Name: h.Name, Document: doc,
		BankAccount: domain.BankAccount{Type: h.BankAccount.Type, Digit: h.BankAccount.Digit, ISPB: h.BankAccount.ISPB},
		Pix:         domain.PixKey{Type: domain.PixKeyType(h.Pix.Type), Key: h.Pix.Key},
	}, nil
}

type historyDoc struct {
	Status string    `bson:"status"`
	Date   time.Time `bson:"date"`
}

func fromHistory[S ~string](h []domain.StatusEntry[S]) []historyDoc {
	out := make([]historyDoc, len(h))
	for i, e := range h {
		out[i] = historyDoc{Status: string(e.Status), Date: e.Date}
	}
	return out
}

// toHistory rebuilds a status history, checking every status with parse: a status this
// program does not know means the data was changed behind its back, and is refused rather than
// carried into the domain.
func toHistory[S ~string](h []historyDoc, parse func(string) (S, error)) ([]domain.StatusEntry[S], error) {
	out := make([]domain.StatusEntry[S], len(h))
	for i, e := range h {
		s, err := parse(e.Status)
		if err != nil {
			return nil, fmt.Errorf("stored history: %w", err)
		}
		out[i] = domain.StatusEntry[S]{Status: s, Date: e.Date.UTC()}
	}
	return out, nil
}

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

// idemSlot is the value of the unique (accountId, idem) index. MongoDB cannot make a unique
// index ignore documents without a key unless it is partial, and partial indexes exist neither
// on FerretDB nor comfortably on sharded clusters; so every document carries a slot that is
// always present and unique: its key when it has one, its own id otherwise. The prefixes keep
// the two spaces apart (a merchant's key can never collide with an id).
func idemSlot(key, id string) string {
	if key == "" {
		return "id:" + id
	}
	return "key:" + key
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

// outboxFields are the pending deliveries of the events a resource raised, kept in the
// resource's own document (see doc.go). Only the outbox code changes them after creation,
// except that Update appends new deliveries.
type outboxFields struct {
	Outbox []deliveryDoc `bson:"outbox,omitempty"`
	// OutboxDue is the earliest time one of the pending deliveries may be claimed; absent when
	// none is pending. Claim finds work through its index.
	OutboxDue *time.Time `bson:"outboxDue,omitempty"`
	// OutboxOpen is true, beside OutboxDue, while a delivery is pending, and absent otherwise:
	// an equality on a boolean, which FerretDB on PostgreSQL filters in the database, where it
	// reads the whole collection for a range on OutboxDue (see Outbox.Claim).
	OutboxOpen bool `bson:"outboxOpen,omitempty"`
	// OutboxRev counts the changes of Outbox and OutboxDue; every outbox write is guarded by it.
	OutboxRev int64 `bson:"outboxRev"`
}

// ledgerFields are the postings of status changes stored in the document but not yet posted
// to the ledger (see doc.go). A status change appends its unchecked postings here in the same
// write as the change; once they are posted the array goes, with ledgerDue.
type ledgerFields struct {
	LedgerPending []postingDoc `bson:"ledgerPending,omitempty"`
	// LedgerDue is when the oldest pending posting was stored; Recover finds, through its
	// index, documents whose postings have waited too long.
	LedgerDue *time.Time `bson:"ledgerDue,omitempty"`
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

func cents(c *domain.Cents) *int64 {
	if c == nil {
		return nil
	}
	v := int64(*c)
	return &v
}

func toCents(v *int64) *domain.Cents {
	if v == nil {
		return nil
	}
	c := domain.Cents(*v)
	return &c
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
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

// wdFields are the fields of a withdrawal document that change with the aggregate, written
// whole by Update as txFields are.
type wdFields struct {
	AccountID       string       `bson:"accountId"`
	Acquirer        string       `bson:"acquirer"`
	Idem            string       `bson:"idem"`
	IdemKey         string       `bson:"idemKey"`
	IdemFingerprint string       `bson:"idemFingerprint"`
	CreatedAt       time.Time    `bson:"createdAt"`
	UpdatedAt       time.Time    `bson:"updatedAt"`
	Status          string       `bson:"status"`
	History         []historyDoc `bson:"history"`

	Amount       int64      `bson:"amount"`
	Fee          int64      `bson:"fee"`
	PixKey       pixKeyDoc  `bson:"pixKey"`
	ExternalCode string     `bson:"externalCode"`
	WebhookURL   string     `bson:"webhookUrl"`
	Payer        *holderDoc `bson:"payer"`
	Receiver     *holderDoc `bson:"receiver"`

	AmountWithdrawn *int64     `bson:"amountWithdrawn"`
	ProcessedDate   *time.Time `bson:"processedDate"`
	ErrorMessage    string     `bson:"errorMessage"`
	EndToEnd        string     `bson:"endToEnd"`

	// PayoutDue is null once the payout is done, so that the (payoutDue) index's range of due
	// work never holds it; documents written before payouts have neither field (see
	// MigratePayouts).
	PayoutDue    *time.Time `bson:"payoutDue"`
	PayoutClaims int        `bson:"payoutClaims"`

	Version int64 `bson:"version"`
}

// wdDoc is a stored withdrawal. Documents written before the ledger also hold seq, the
// account's withdrawal sequence number the balance check then relied on; it is no longer read
// or written.
type wdDoc struct {
	ID     string       `bson:"_id"`
	Fields wdFields     `bson:",inline"`
	Box    outboxFields `bson:",inline"`
	Ledger ledgerFields `bson:",inline"`
}

// wdSnapshot is a withdrawal as an event carries it.
type wdSnapshot struct {
	ID     string   `bson:"_id"`
	Fields wdFields `bson:",inline"`
}

func fromWithdrawal(w *domain.Withdrawal) wdSnapshot {
	r := w.Record()
	p := r.Payout
	return wdSnapshot{ID: r.ID, Fields: wdFields{
		AccountID: r.AccountID, Acquirer: r.Acquirer,
		Idem: idemSlot(r.Idempotency.Key, r.ID), IdemKey: r.Idempotency.Key, IdemFingerprint: r.Idempotency.Fingerprint,
		CreatedAt: r.CreatedAt, UpdatedAt: w.UpdatedAt(), Status: string(r.Status), History: fromHistory(r.History),
		Amount: int64(p.Amount), Fee: int64(p.Fee), PixKey: pixKeyDoc{Type: string(p.PixKey.Type), Key: p.PixKey.Key},
		ExternalCode: p.ExternalCode, WebhookURL: p.WebhookURL,
		Payer: fromHolder(p.Payer), Receiver: fromHolder(p.Receiver),
		AmountWithdrawn: cents(r.AmountWithdrawn), ProcessedDate: r.ProcessedDate,
		ErrorMessage: r.ErrorMessage, EndToEnd: r.EndToEnd,
		PayoutDue: r.PayoutDue, PayoutClaims: r.PayoutClaims, Version: r.Version,
	}}
}

func (d *wdSnapshot) toWithdrawal() (*domain.Withdrawal, error) {
	f := d.Fields
	payer, err := f.Payer.toHolder()
	if err != nil {
		return nil, err
	}
	receiver, err := f.Receiver.toHolder()
	if err != nil {
		return nil, err
	}
	status, err := domain.ParseWithdrawalStatus(f.Status)
	if err != nil {
		return nil, fmt.Errorf("stored withdrawal %s: %w", d.ID, err)
	}
	history, err := toHistory(f.History, domain.ParseWithdrawalStatus)
	if err != nil {
		return nil, fmt.Errorf("stored withdrawal %s: %w", d.ID, err)
	}
	return domain.UnmarshalWithdrawalFromDatabase(domain.WithdrawalRecord{
		ID: d.ID, AccountID: f.AccountID, Acquirer: f.Acquirer,
		Payout: domain.Payout{
			Amount: domain.Cents(f.Amount), Fee: domain.Cents(f.Fee),
			PixKey:       domain.PixKey{Type: domain.PixKeyType(f.PixKey.Type), Key: f.PixKey.Key},
			ExternalCode: f.ExternalCode, WebhookURL: f.WebhookURL, Payer: payer, Receiver: receiver,
		},
		Idempotency: domain.Idempotency{Key: f.IdemKey, Fingerprint: f.IdemFingerprint},
		CreatedAt:   f.CreatedAt, Status: status, History: history,
		AmountWithdrawn: toCents(f.AmountWithdrawn), ProcessedDate: utcPtr(f.ProcessedDate),
		ErrorMessage: f.ErrorMessage, EndToEnd: f.EndToEnd,
		PayoutDue: utcPtr(f.PayoutDue), PayoutClaims: f.PayoutClaims, Version: f.Version,
	}), nil
}

type attemptDoc struct {
	At         time.Time `bson:"at"`
	StatusCode int       `bson:"statusCode"`
	Error      string    `bson:"error,omitempty"`
	DurationNS int64     `bson:"durationNs"`
}

// deliveryDoc is one element of a document's outbox array: an event and the state of its
// delivery. The event's account, resource and kind are the enclosing document's.
type deliveryDoc struct {
	EventID     string      `bson:"id"`
	Type        string      `bson:"type"`
	CreatedAt   time.Time   `bson:"createdAt"`
	WebhookURL  string      `bson:"webhookUrl"`
	Transaction *txSnapshot `bson:"transaction,omitempty"`
	Withdrawal  *wdSnapshot `bson:"withdrawal,omitempty"`

	Status        string       `bson:"status"`
	NextAttemptAt time.Time    `bson:"nextAttemptAt"`
	Owner         string       `bson:"owner,omitempty"`
	LeaseUntil    *time.Time   `bson:"leaseUntil,omitempty"`
	Attempts      []attemptDoc `bson:"attempts"`
}

// newDelivery stores an event pending and due at once: at the time of the transition that
// raised it (the adapter has no clock of its own, and the event's time comes from the
// application's clock, which tests control).
func newDelivery(e domain.Event) deliveryDoc {
	d := deliveryDoc{
		EventID: e.ID, Type: e.Type, CreatedAt: e.CreatedAt.UTC(), WebhookURL: e.WebhookURL,
		Status: string(ports.DeliveryPending), NextAttemptAt: e.CreatedAt.UTC(), Attempts: []attemptDoc{},
	}
	if e.Transaction != nil {
		s := fromTransaction(e.Transaction)
		d.Transaction = &s
	}
	if e.Withdrawal != nil {
		s := fromWithdrawal(e.Withdrawal)
		d.Withdrawal = &s
	}
	return d
}

// claimableAt is when the delivery may next be claimed: its next attempt time, or the end of
// the lease someone holds on it, whichever is later. Nil when it is not pending.
func (d *deliveryDoc) claimableAt() *time.Time {
	if d.Status != string(ports.DeliveryPending) {
		return nil
	}
	at := d.NextAttemptAt
	if d.Owner != "" && d.LeaseUntil != nil && d.LeaseUntil.After(at) {
		at = *d.LeaseUntil
	}
	return &at
}

// outboxDue is the earliest claimableAt of the deliveries, nil when none is pending.
func outboxDue(ds []deliveryDoc) *time.Time {
	var due *time.Time
	for i := range ds {
		if at := ds[i].claimableAt(); at != nil && (due == nil || at.Before(*due)) {
			due = at
		}
	}
	return due
}

func newOutbox(events []domain.Event) outboxFields {
	var o outboxFields
	for _, e := range events {
		o.Outbox = append(o.Outbox, newDelivery(e))
	}
	o.OutboxDue = outboxDue(o.Outbox)
	o.OutboxOpen = o.OutboxDue != nil
	return o
}

func (d *deliveryDoc) toDelivery(accountID, resourceID string, kind domain.ResourceKind) (ports.Delivery, error) {
	e := domain.Event{
		ID: d.EventID, Type: d.Type, AccountID: accountID, ResourceID: resourceID, Kind: kind,
		WebhookURL: d.WebhookURL, CreatedAt: d.CreatedAt.UTC(),
	}
	var err error
	if d.Transaction != nil {
		if e.Transaction, err = d.Transaction.toTransaction(); err != nil {
			return ports.Delivery{}, err
		}
	}
	if d.Withdrawal != nil {
		if e.Withdrawal, err = d.Withdrawal.toWithdrawal(); err != nil {
			return ports.Delivery{}, err
		}
	}
	status, err := ports.ParseDeliveryStatus(d.Status)
	if err != nil {
		return ports.Delivery{}, fmt.Errorf("stored delivery of event %s: %w", d.EventID, err)
	}
	out := ports.Delivery{Event: e, Status: status, NextAttemptAt: d.NextAttemptAt.UTC()}
	for _, a := range d.Attempts {
		out.Attempts = append(out.Attempts, ports.Attempt{
			At: a.At.UTC(), StatusCode: a.StatusCode, Error: a.Error, Duration: time.Duration(a.DurationNS),
		})
	}
	return out, nil
}

type webhookDoc struct {
	Current           string     `bson:"current"`
	Previous          string     `bson:"previous,omitempty"`
	PreviousExpiresAt *time.Time `bson:"previousExpiresAt,omitempty"`
}

// accountDoc is a stored client account.
type accountDoc struct {
	ID     string   `bson:"_id"`
	Name   string   `bson:"name"`
	Status string   `bson:"status"`
	Scopes []string `bson:"scopes"`
	// ScopeSet is the revision of the scope list the record was written under (see
	// domain.ScopesCurrent): records written before balance:read existed have none (0), those
	// written before account:admin existed have 1. On read, domain.UpgradeLegacyScopes gives
	// them what they could do then (balance:read to readers of transactions, account:admin to
	// everyone), so that nobody is locked out by the upgrade.
	ScopeSet  int        `bson:"scopeSet,omitempty"`
	Webhook   webhookDoc `bson:"webhook"`
	CreatedAt time.Time  `bson:"createdAt"`
	Version   int64      `bson:"version"`
}

// currentScopeSet is the revision of the scope list this program writes.
const currentScopeSet = domain.ScopesCurrent

func fromAccount(a *domain.Account, version int64) accountDoc {
	scopes := make([]string, 0, len(a.Scopes()))
	for _, s := range a.Scopes() {
		scopes = append(scopes, string(s))
	}
	w := a.Webhook()
	return accountDoc{
		ID: a.ID(), Name: a.Name(), Status: string(a.Status()), Scopes: scopes, ScopeSet: currentScopeSet,
		Webhook:   webhookDoc{Current: w.Current, Previous: w.Previous, PreviousExpiresAt: utcPtr(w.PreviousExpiresAt)},
		CreatedAt: a.CreatedAt(), Version: version,
	}
}

func (d *accountDoc) toAccount() (*domain.Account, error) {
	status, err := domain.ParseAccountStatus(d.Status)
	if err != nil {
		return nil, fmt.Errorf("stored account %s: %w", d.ID, err)
	}
	scopes := make([]domain.Scope, len(d.Scopes))
	for i, s := range d.Scopes {
		scopes[i] = domain.Scope(s)
	}
	if d.ScopeSet < currentScopeSet {
		scopes = domain.UpgradeLegacyScopes(scopes, d.ScopeSet)
	}
	return domain.UnmarshalAccountFromDatabase(domain.AccountRecord{
		ID: d.ID, Name: d.Name, Status: status, Scopes: scopes, CreatedAt: d.CreatedAt, Version: d.Version,
		Webhook: domain.WebhookSecrets{Current: d.Webhook.Current, Previous: d.Webhook.Previous, PreviousExpiresAt: utcPtr(d.Webhook.PreviousExpiresAt)},
	}), nil
}

// credentialDoc is a stored credential; its _id is the client id, unique across accounts.
type credentialDoc struct {
	ClientID   string     `bson:"_id"`
	AccountID  string     `bson:"accountId"`
	SecretHash []byte     `bson:"secretHash"`
	CreatedAt  time.Time  `bson:"createdAt"`
	RevokedAt  *time.Time `bson:"revokedAt,omitempty"`
	LastUsedAt *time.Time `bson:"lastUsedAt,omitempty"`
	// Slot is the place the credential holds among its account's active ones ("<accountId>/<n>",
	// n below domain.MaxActiveCredentials), under a unique sparse index: that index is what
	// keeps the cap when creations race (see CreateCredential). Revoking frees it (unset);
	// credentials stored before the cap existed have none.
	Slot string `bson:"slot,omitempty"`
}

func fromCredential(c domain.Credential) credentialDoc {
	return credentialDoc{ClientID: c.ClientID, AccountID: c.AccountID, SecretHash: c.SecretHash,
		CreatedAt: c.CreatedAt.UTC(), RevokedAt: utcPtr(c.RevokedAt), LastUsedAt: utcPtr(c.LastUsedAt)}
}

func (d *credentialDoc) toCredential() domain.Credential {
	return domain.Credential{ClientID: d.ClientID, AccountID: d.AccountID, SecretHash: d.SecretHash,
		CreatedAt: d.CreatedAt.UTC(), RevokedAt: utcPtr(d.RevokedAt), LastUsedAt: utcPtr(d.LastUsedAt)}
}
