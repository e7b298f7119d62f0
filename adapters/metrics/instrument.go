package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, domain.ErrNotFound):
		return "not_found"
	case errors.Is(err, ports.ErrUnavailable):
		return "unavailable"
	}
	return "error"
}

func (m *Metrics) timeCall(port, method string, start time.Time, err error) {
	m.storeSeries.get(storeLabels{port, method, outcome(err)}, func(l storeLabels) prometheus.Observer {
		return m.storeCallTimes.WithLabelValues(l.port, l.method, l.outcome)
	}).Observe(time.Since(start).Seconds())
}

// QRRenderer times the wrapped renderer.
func (m *Metrics) QRRenderer(next ports.QRRenderer) ports.QRRenderer { return qrRenderer{next, m} }

type qrRenderer struct {
	next ports.QRRenderer
	m    *Metrics
}

func (r qrRenderer) RenderPNG(ctx context.Context, content string) ([]byte, error) {
	start := time.Now()
	png, err := r.next.RenderPNG(ctx, content)
	if err == nil {
		r.m.qrRender.Observe(time.Since(start).Seconds())
	}
	return png, err
}

// Transactions times every call of the wrapped repository and counts creations and the
// statuses transactions enter.
func (m *Metrics) Transactions(next ports.TransactionRepository) ports.TransactionRepository {
	return transactions{next, m}
}

type transactions struct {
	next ports.TransactionRepository
	m    *Metrics
}

var _ ports.TransactionRepository = transactions{}

func (r transactions) Create(ctx context.Context, t *domain.Transaction) error {
	start := time.Now()
	err := r.next.Create(ctx, t)
	r.m.timeCall("transactions", "Create", start, err)
	if err == nil {
		r.m.created.WithLabelValues(string(t.Status())).Inc()
	}
	return err
}

func (r transactions) Get(ctx context.Context, accountID, id string) (*domain.Transaction, error) {
	start := time.Now()
	t, err := r.next.Get(ctx, accountID, id)
	r.m.timeCall("transactions", "Get", start, err)
	return t, err
}

func (r transactions) GetByIdempotencyKey(ctx context.Context, accountID, key string) (*domain.Transaction, error) {
	start := time.Now()
	t, err := r.next.GetByIdempotencyKey(ctx, accountID, key)
	r.m.timeCall("transactions", "GetByIdempotencyKey", start, err)
	return t, err
}

func (r transactions) Find(ctx context.Context, id string) (*domain.Transaction, error) {
	start := time.Now()
	t, err := r.next.Find(ctx, id)
	r.m.timeCall("transactions", "Find", start, err)
	return t, err
}

func (r transactions) FindByPaymentToken(ctx context.Context, token string) (*domain.Transaction, error) {
	start := time.Now()
	t, err := r.next.FindByPaymentToken(ctx, token)
	r.m.timeCall("transactions", "FindByPaymentToken", start, err)
	return t, err
}

func (r transactions) FindByPixLocation(ctx context.Context, id string) (*domain.Transaction, error) {
	start := time.Now()
	t, err := r.next.FindByPixLocation(ctx, id)
	r.m.timeCall("transactions", "FindByPixLocation", start, err)
	return t, err
}

func (r transactions) FindByCobTxID(ctx context.Context, txid string) (*domain.Transaction, error) {
	start := time.Now()
	t, err := r.next.FindByCobTxID(ctx, txid)
	r.m.timeCall("transactions", "FindByCobTxID", start, err)
	return t, err
}

func (r transactions) List(ctx context.Context, f ports.TransactionFilter, p ports.Page) (ports.TransactionPage, error) {
	start := time.Now()
	page, err := r.next.List(ctx, f, p)
	r.m.timeCall("transactions", "List", start, err)
	return page, err
}

func (r transactions) Update(ctx context.Context, accountID, id string, fn func(*domain.Transaction) error) (*domain.Transaction, error) {
	start := time.Now()
	var before domain.TransactionStatus
	t, err := r.next.Update(ctx, accountID, id, func(t *domain.Transaction) error {
		before = t.Status()
		return fn(t)
	})
	r.m.timeCall("transactions", "Update", start, err)
	if err == nil && t.Status() != before {
		r.m.statusChanges.WithLabelValues(string(domain.ResourceTransaction), string(t.Status())).Inc()
	}
	return t, err
}

func (r transactions) ListExpired(ctx context.Context, now time.Time, limit int) ([]*domain.Transaction, error) {
	start := time.Now()
	ts, err := r.next.ListExpired(ctx, now, limit)
	r.m.timeCall("transactions", "ListExpired", start, err)
	return ts, err
}

func (r transactions) ListDevolutionsDue(ctx context.Context, until time.Time, limit int) ([]*domain.Transaction, error) {
	start := time.Now()
	ts, err := r.next.ListDevolutionsDue(ctx, until, limit)
	r.m.timeCall("transactions", "ListDevolutionsDue", start, err)
	return ts, err
}

func (r transactions) ListByStatus(ctx context.Context, status domain.TransactionStatus, until time.Time, limit int) ([]*domain.Transaction, error) {
	start := time.Now()
	ts, err := r.next.ListByStatus(ctx, status, until, limit)
	r.m.timeCall("transactions", "ListByStatus", start, err)
	return ts, err
}

// Withdrawals times every call of the wrapped repository and counts the statuses withdrawals
// enter.
func (m *Metrics) Withdrawals(next ports.WithdrawalRepository) ports.WithdrawalRepository {
	return withdrawals{next, m}
}

type withdrawals struct {
	next ports.WithdrawalRepository
	m    *Metrics
}

var _ ports.WithdrawalRepository = withdrawals{}

func (r withdrawals) Create(ctx context.Context, w *domain.Withdrawal) error {
	start := time.Now()
	err := r.next.Create(ctx, w)
	r.m.timeCall("withdrawals", "Create", start, err)
	return err
}

func (r withdrawals) Get(ctx context.Context, accountID, id string) (*domain.Withdrawal, error) {
	start := time.Now()
	w, err := r.next.Get(ctx, accountID, id)
	r.m.timeCall("withdrawals", "Get", start, err)
	return w, err
}

func (r withdrawals) GetByIdempotencyKey(ctx context.Context, accountID, key string) (*domain.Withdrawal, error) {
	start := time.Now()
	w, err := r.next.GetByIdempotencyKey(ctx, accountID, key)
	r.m.timeCall("withdrawals", "GetByIdempotencyKey", start, err)
	return w, err
}

func (r withdrawals) Find(ctx context.Context, id string) (*domain.Withdrawal, error) {
	start := time.Now()
	w, err := r.next.Find(ctx, id)
	r.m.timeCall("withdrawals", "Find", start, err)
	return w, err
}

// Update counts every status the update entered: a payout's answer may move a withdrawal
// twice in one update (PENDING → PROCESSING → PROCESSED).
func (r withdrawals) Update(ctx context.Context, accountID, id string, fn func(*domain.Withdrawal) error) (*domain.Withdrawal, error) {
	start := time.Now()
	var before int
	w, err := r.next.Update(ctx, accountID, id, func(w *domain.Withdrawal) error {
		before = len(w.History())
		return fn(w)
	})
	r.m.timeCall("withdrawals", "Update", start, err)
	if err == nil {
		for _, h := range w.History()[min(before, len(w.History())):] {
			r.m.statusChanges.WithLabelValues(string(domain.ResourceWithdrawal), string(h.Status)).Inc()
		}
	}
	return w, err
}

func (r withdrawals) ListPayoutsDue(ctx context.Context, until time.Time, limit int) ([]*domain.Withdrawal, error) {
	start := time.Now()
	ws, err := r.next.ListPayoutsDue(ctx, until, limit)
	r.m.timeCall("withdrawals", "ListPayoutsDue", start, err)
	return ws, err
}

func (r withdrawals) ListByAccount(ctx context.Context, accountID string, p ports.Page) ([]*domain.Withdrawal, error) {
	start := time.Now()
	ws, err := r.next.ListByAccount(ctx, accountID, p)
	r.m.timeCall("withdrawals", "ListByAccount", start, err)
	return ws, err
}

// Ledger times every call of the wrapped ledger.
func (m *Metrics) Ledger(next ports.Ledger) ports.Ledger { return ledger{next, m} }

type ledger struct {
	next ports.Ledger
	m    *Metrics
}

var _ ports.Ledger = ledger{}

func (l ledger) Balance(ctx context.Context, accountID string) (domain.Balance, error) {
	start := time.Now()
	b, err := l.next.Balance(ctx, accountID)
	l.m.timeCall("ledger", "Balance", start, err)
	return b, err
}

func (l ledger) Entries(ctx context.Context, f ports.EntryFilter, limit int) ([]domain.Entry, error) {
	start := time.Now()
	es, err := l.next.Entries(ctx, f, limit)
	l.m.timeCall("ledger", "Entries", start, err)
	return es, err
}

// Scan is not timed: its time is the caller's, entry by entry.
func (l ledger) Scan(ctx context.Context, accountID string, fn func(domain.Entry) error) error {
	return l.next.Scan(ctx, accountID, fn)
}

func (l ledger) Ledgers(ctx context.Context) ([]string, error) {
	start := time.Now()
	ids, err := l.next.Ledgers(ctx)
	l.m.timeCall("ledger", "Ledgers", start, err)
	return ids, err
}

func (l ledger) Post(ctx context.Context, postings ...domain.Posting) (int, error) {
	start := time.Now()
	n, err := l.next.Post(ctx, postings...)
	l.m.timeCall("ledger", "Post", start, err)
	return n, err
}

func (l ledger) ClaimPayment(ctx context.Context, c ports.PaymentClaim) (ports.PaymentClaim, error) {
	start := time.Now()
	got, err := l.next.ClaimPayment(ctx, c)
	l.m.timeCall("ledger", "ClaimPayment", start, err)
	return got, err
}

func (l ledger) MarkLate(ctx context.Context, endToEndID string, due time.Time) error {
	start := time.Now()
	err := l.next.MarkLate(ctx, endToEndID, due)
	l.m.timeCall("ledger", "MarkLate", start, err)
	return err
}

func (l ledger) UpdateLateDevolution(ctx context.Context, endToEndID string, fn func(*ports.PaymentClaim) error) (ports.PaymentClaim, error) {
	start := time.Now()
	c, err := l.next.UpdateLateDevolution(ctx, endToEndID, fn)
	l.m.timeCall("ledger", "UpdateLateDevolution", start, err)
	return c, err
}

func (l ledger) LateDevolutionsDue(ctx context.Context, until time.Time, limit int) ([]ports.PaymentClaim, error) {
	start := time.Now()
	cs, err := l.next.LateDevolutionsDue(ctx, until, limit)
	l.m.timeCall("ledger", "LateDevolutionsDue", start, err)
	return cs, err
}

func (l ledger) LatePayments(ctx context.Context) ([]ports.PaymentClaim, error) {
	start := time.Now()
	cs, err := l.next.LatePayments(ctx)
	l.m.timeCall("ledger", "LatePayments", start, err)
	return cs, err
}

func (l ledger) Recover(ctx context.Context) (int, error) {
	start := time.Now()
	n, err := l.next.Recover(ctx)
	l.m.timeCall("ledger", "Recover", start, err)
	return n, err
}
