package metrics

import (
	"context"
	"errors"
	"time"

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
	m.storeCallTimes.WithLabelValues(port, method, outcome(err)).Observe(time.Since(start).Seconds())
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

func (r withdrawals) CreateReserving(ctx context.Context, w *domain.Withdrawal, check func(domain.Balance) error) error {
	start := time.Now()
	err := r.next.CreateReserving(ctx, w, check)
	r.m.timeCall("withdrawals", "CreateReserving", start, err)
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

func (r withdrawals) Update(ctx context.Context, accountID, id string, fn func(*domain.Withdrawal) error) (*domain.Withdrawal, error) {
	start := time.Now()
	var before domain.WithdrawalStatus
	w, err := r.next.Update(ctx, accountID, id, func(w *domain.Withdrawal) error {
		before = w.Status()
		return fn(w)
	})
	r.m.timeCall("withdrawals", "Update", start, err)
	if err == nil && w.Status() != before {
		r.m.statusChanges.WithLabelValues(string(domain.ResourceWithdrawal), string(w.Status())).Inc()
	}
	return w, err
}

func (r withdrawals) ListByStatus(ctx context.Context, status domain.WithdrawalStatus, until time.Time, limit int) ([]*domain.Withdrawal, error) {
	start := time.Now()
	ws, err := r.next.ListByStatus(ctx, status, until, limit)
	r.m.timeCall("withdrawals", "ListByStatus", start, err)
	return ws, err
}

func (r withdrawals) Balance(ctx context.Context, accountID string) (domain.Balance, error) {
	start := time.Now()
	b, err := r.next.Balance(ctx, accountID)
	r.m.timeCall("withdrawals", "Balance", start, err)
	return b, err
}
