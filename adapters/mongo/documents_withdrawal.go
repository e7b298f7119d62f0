package mongo

import (
	"fmt"
	"time"

	"github.com/pixgate/pixgate/domain"
)

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
