package application_test

// What the use cases of this package need in their tests, shared by every test of the package.
// The stores are adapters/memory's, behind ports/porttest's fault injector (fail the nth call
// of a method, delay one, run a hook first to stage a race, count calls), with the look-ups
// assertions need: one implementation of each store port, not a copy that could drift. The
// other ports have hand-written fakes: a clock the test moves, ids and payment tokens, the
// webhook outbox (see fakeOutbox), sender and encoder, the token issuer, verifier and
// exchanger, the PIX emitter, renderer, txid decoder, directory and location signer, the
// acquirer, a random draw and a loopback resolver. The test fixtures ("worlds") that wire them
// to use cases stay beside their tests.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
	"github.com/pixgate/pixgate/ports/porttest"
)

// Each fake is the port it stands for.
var (
	_ ports.Clock               = (*fakeClock)(nil)
	_ ports.IDGenerator         = (*fakeIDs)(nil)
	_ ports.CapabilityGenerator = (*fakeCapabilities)(nil)
	_ ports.Outbox              = (*fakeOutbox)(nil)
	_ ports.WebhookSender       = (*fakeSender)(nil)
	_ ports.EventEncoder        = fakeEncoder{}
	_ ports.TokenIssuer         = (*fakeIssuer)(nil)
	_ ports.TokenVerifier       = (*fakeVerifier)(nil)
	_ ports.CredentialExchanger = (*fakeExchanger)(nil)
	_ ports.PixEmitter          = (*fakeEmitter)(nil)
	_ ports.QRRenderer          = fakeRenderer{}
	_ ports.QRRenderer          = rendererFunc(nil)
	_ ports.TxIDDecoder         = fakeTxIDs{}
	_ ports.PixDirectory        = fakeDirectory{}
	_ ports.PixLocationSigner   = (*fakeSigner)(nil)
	_ ports.Acquirer            = (*fakeAcquirer)(nil)
	_ ports.Random              = fakeRandom(0)
)

// fakeClock is a clock that moves only when the test advances it.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock(at time.Time) *fakeClock { return &fakeClock{now: at} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fakeIDs makes readable UUIDs, counting from 1.
type fakeIDs struct {
	mu sync.Mutex
	n  int
}

func (g *fakeIDs) NewID() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	return fmt.Sprintf("00000000-0000-4000-8000-%012d", g.n)
}

// newAccounts is the account store of the tests: adapters/memory behind a fault injector.
func newAccounts() *porttest.Accounts { return porttest.NewAccounts(memory.NewAccounts()) }

// fakeIssuer is a ports.TokenIssuer whose tokens are readable strings.
type fakeIssuer struct {
	clock  ports.Clock
	mu     sync.Mutex
	issued []domain.Principal
}

func (i *fakeIssuer) Issue(_ context.Context, p domain.Principal, lifetime time.Duration) (ports.IssuedToken, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.issued = append(i.issued, p)
	now := i.clock.Now().Truncate(time.Second)
	return ports.IssuedToken{Token: fmt.Sprintf("token-%d-%s", len(i.issued), p.ClientID), IssuedAt: now, ExpiresAt: now.Add(lifetime)}, nil
}

func (i *fakeIssuer) Issued() []domain.Principal {
	i.mu.Lock()
	defer i.mu.Unlock()
	return slices.Clone(i.issued)
}

// fakeVerifier is a ports.TokenVerifier that knows the tokens it was told about.
type fakeVerifier struct {
	tokens map[string]ports.TokenClaims
}

func (v *fakeVerifier) Verify(_ context.Context, raw string) (ports.TokenClaims, error) {
	c, ok := v.tokens[raw]
	if !ok {
		return ports.TokenClaims{}, fmt.Errorf("%w: unknown test token", ports.ErrInvalidToken)
	}
	return c, nil
}

// fakeExchanger is a ports.CredentialExchanger answering from a table.
type fakeExchanger struct {
	secrets map[string]string // client id -> secret
	scopes  []domain.Scope
	down    bool
	clock   ports.Clock
	asked   []domain.Scope // the scopes of the last exchange
}

func (e *fakeExchanger) Exchange(_ context.Context, clientID, secret string, scopes []domain.Scope) (ports.UpstreamToken, error) {
	e.asked = scopes
	if e.down {
		return ports.UpstreamToken{}, fmt.Errorf("%w: connection refused", ports.ErrUpstreamUnavailable)
	}
	if s, ok := e.secrets[clientID]; !ok || s != secret {
		return ports.UpstreamToken{}, ports.ErrInvalidCredentials
	}
	return ports.UpstreamToken{AccessToken: "upstream-" + clientID, Lifetime: 5 * time.Minute, ExpiresAt: e.clock.Now().Add(5 * time.Minute), Scopes: e.scopes}, nil
}

// fakeCapabilities makes distinct payment page tokens, as readable as fakeIDs' ids.
type fakeCapabilities struct {
	mu sync.Mutex
	n  int
}

func (g *fakeCapabilities) NewCapability() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	return fmt.Sprintf("lc-payment-token-%012d", g.n)
}

// fakeEmitter writes a fake BR Code, or fails with err when set.
type fakeEmitter struct{ err error }

func (e *fakeEmitter) Acquirer() string { return "SANDBOX" }

func (e *fakeEmitter) Emit(_ context.Context, c domain.PixCharge) (domain.PixCode, error) {
	if e.err != nil {
		return domain.PixCode{}, e.err
	}
	return domain.PixCode{URI: "000201-fake-code-of-" + c.TransactionID}, nil
}

// fakeRenderer draws a QR code as a PNG signature followed by its content.
type fakeRenderer struct{}

func (fakeRenderer) RenderPNG(_ context.Context, content string) ([]byte, error) {
	return []byte("\x89PNG" + content), nil
}

// rendererFunc is a renderer that answers as its function does, for the failures of drawing.
type rendererFunc func(ctx context.Context, content string) ([]byte, error)

func (f rendererFunc) RenderPNG(ctx context.Context, content string) ([]byte, error) {
	return f(ctx, content)
}

// fakeTxIDs maps txids to transaction ids: the txid of a transaction is "tx" followed by its id
// without dashes, as far as this fake knows.
type fakeTxIDs struct{}

func fakeTxID(id string) string {
	out := []byte("tx")
	for i := 0; i < len(id); i++ {
		if id[i] != '-' {
			out = append(out, id[i])
		}
	}
	return string(out)
}

func (fakeTxIDs) TransactionID(txid string) (string, error) {
	if len(txid) != 34 || txid[:2] != "tx" {
		return "", fmt.Errorf("txid %q: %w", txid, domain.ErrNotFound)
	}
	h := txid[2:]
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

// txStore is the transaction store of the tests: adapters/memory's behind a fault injector,
// with the look-ups the assertions need (they bypass the injector).
type txStore struct {
	*porttest.Transactions
	store *memory.Store
}

func newTxStore(store *memory.Store) *txStore {
	return &txStore{Transactions: porttest.NewTransactions(store.Transactions()), store: store}
}

// put stores t as it is, for tests that stage a store.
func (r *txStore) put(t *domain.Transaction) {
	if err := r.Repo.Create(context.Background(), t); err != nil {
		panic(fmt.Sprintf("staging transaction %s: %v", t.ID(), err))
	}
}

// stored returns the stored transaction whatever its account, nil when there is none.
func (r *txStore) stored(id string) *domain.Transaction {
	t, err := r.Repo.Find(context.Background(), id)
	if err != nil {
		return nil
	}
	return t
}

// eventTypes lists the types of the events stored for id, oldest first.
func (r *txStore) eventTypes(id string) []string {
	t := r.stored(id)
	if t == nil {
		return nil
	}
	ds, err := r.store.Outbox().Deliveries(context.Background(), t.AccountID(), domain.ResourceTransaction, id)
	if err != nil {
		panic(err)
	}
	var out []string
	for _, d := range ds {
		out = append(out, d.Event.Type)
	}
	return out
}

// postingTypes lists the types of the entries of the service's own ledger in l (late
// payments, suspense, fees), oldest first.
func postingTypes(t testing.TB, l ports.Ledger) []domain.MovementType {
	t.Helper()
	var out []domain.MovementType
	if err := l.Scan(context.Background(), "", func(e domain.Entry) error { out = append(out, e.Type); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// wdStore is the withdrawal store of the tests: adapters/memory's behind a fault injector,
// with the look-ups the assertions need (they bypass the injector).
type wdStore struct {
	*porttest.Withdrawals
	store *memory.Store
}

func newWdStore(store *memory.Store) *wdStore {
	return &wdStore{Withdrawals: porttest.NewWithdrawals(store.Withdrawals()), store: store}
}

// stored counts the stored withdrawals. A withdrawal is a debit of a funded account, so the
// accounts with a ledger are every account that may have one.
func (r *wdStore) stored() int {
	ctx := context.Background()
	ids, err := r.store.Ledger().Ledgers(ctx)
	if err != nil {
		panic(err)
	}
	n := 0
	for _, id := range ids {
		ws, err := r.Repo.ListByAccount(ctx, id, ports.Page{Number: 1, Size: 100})
		if err != nil {
			panic(err)
		}
		n += len(ws)
	}
	return n
}

// eventTypes lists the types of the events stored for id, oldest first.
func (r *wdStore) eventTypes(id string) []string {
	ctx := context.Background()
	w, err := r.Repo.Find(ctx, id)
	if err != nil {
		return nil
	}
	ds, err := r.store.Outbox().Deliveries(ctx, w.AccountID(), domain.ResourceWithdrawal, id)
	if err != nil {
		panic(err)
	}
	var out []string
	for _, d := range ds {
		out = append(out, d.Event.Type)
	}
	return out
}

// fund gives account amount more available balance in l, as an opening balance would.
func fund(t testing.TB, l ports.Ledger, account string, amount domain.Cents) {
	t.Helper()
	ctx := context.Background()
	b, err := l.Balance(ctx, account)
	if err != nil {
		t.Fatal(err)
	}
	have := domain.LedgerBalance{Available: b.Available, Blocked: b.Blocked}
	want := domain.LedgerBalance{Available: b.Available + amount, Blocked: b.Blocked}
	if _, err := l.Post(ctx, domain.OpeningBalancePostings(account, have, want)...); err != nil {
		t.Fatal(err)
	}
}

// fakeAcquirer records the devolutions asked for and answers with answer (in progress by
// default).
type fakeAcquirer struct {
	mu     sync.Mutex
	asked  []ports.Devolution
	answer ports.DevolutionResult
	err    error
}

func (a *fakeAcquirer) RequestDevolution(_ context.Context, d ports.Devolution) (ports.DevolutionResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, d)
	if a.answer.Status == "" {
		return ports.DevolutionResult{Status: ports.DevolutionInProgress}, a.err
	}
	return a.answer, a.err
}

// Devolution reads back what was asked: the answer, once asked; ErrDevolutionNotFound before.
func (a *fakeAcquirer) Devolution(_ context.Context, e2e, id string) (ports.DevolutionResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, d := range a.asked {
		if d.EndToEndID == e2e && d.ID == id && a.err == nil {
			if a.answer.Status == "" {
				return ports.DevolutionResult{Status: ports.DevolutionInProgress}, nil
			}
			return a.answer, nil
		}
	}
	if a.err != nil {
		return ports.DevolutionResult{}, a.err
	}
	return ports.DevolutionResult{}, ports.ErrDevolutionNotFound
}

// fakeRandom is a random source that always draws the same number.
type fakeRandom float64

func (d fakeRandom) Float64() float64 { return float64(d) }

// fakeOutbox is an in-memory ports.Outbox that honours leases as the port says: a held delivery
// is claimable again only once its lease ended, and only its holder may record an attempt.
// It stays a fake, unlike the other stores: the port takes events only with the aggregate that
// raised them, while the dispatcher's tests add bare events by the dozen to one resource, and
// they read lease holders and claim counts that the port does not show.
type fakeOutbox struct {
	mu        sync.Mutex
	items     map[string]*outboxItem
	pending   map[string]*outboxItem // the pending subset of items, so that claims stay cheap
	claimedBy map[string]int         // owner → deliveries claimed
	seq       int
}

type outboxItem struct {
	d     ports.Delivery
	owner string
	until time.Time
	seq   int
}

func newFakeOutbox() *fakeOutbox {
	return &fakeOutbox{items: map[string]*outboxItem{}, pending: map[string]*outboxItem{}, claimedBy: map[string]int{}}
}

func (o *fakeOutbox) add(e domain.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seq++
	it := &outboxItem{d: ports.Delivery{Event: e, Status: ports.DeliveryPending, NextAttemptAt: e.CreatedAt}, seq: o.seq}
	o.items[e.ID] = it
	o.pending[e.ID] = it
}

func copyDelivery(d ports.Delivery) ports.Delivery {
	d.Attempts = slices.Clone(d.Attempts)
	return d
}

func (o *fakeOutbox) Claim(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int, skipAccounts []string) ([]ports.Delivery, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var due []*outboxItem
	for _, it := range o.pending {
		if !it.d.NextAttemptAt.After(now) && (it.owner == "" || !it.until.After(now)) && !slices.Contains(skipAccounts, it.d.Event.AccountID) {
			due = append(due, it)
		}
	}
	slices.SortFunc(due, func(a, b *outboxItem) int {
		return cmp.Or(a.d.NextAttemptAt.Compare(b.d.NextAttemptAt), cmp.Compare(a.seq, b.seq))
	})
	out := []ports.Delivery{}
	for _, it := range due[:min(limit, len(due))] {
		it.owner, it.until = owner, now.Add(lease)
		o.claimedBy[owner]++
		out = append(out, copyDelivery(it.d))
	}
	return out, nil
}

func (o *fakeOutbox) RecordAttempt(ctx context.Context, eventID, owner string, a ports.Attempt, status ports.DeliveryStatus, next time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	it := o.items[eventID]
	if it == nil || it.owner != owner {
		return fmt.Errorf("delivery %s not held by %s: %w", eventID, owner, ports.ErrVersionConflict)
	}
	it.d.Attempts = append(it.d.Attempts, a)
	it.d.Status, it.d.NextAttemptAt = status, next
	it.owner, it.until = "", time.Time{}
	if status != ports.DeliveryPending {
		delete(o.pending, eventID)
	}
	return nil
}

func (o *fakeOutbox) Release(ctx context.Context, owner string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, it := range o.items {
		if it.owner == owner {
			it.owner, it.until = "", time.Time{}
		}
	}
	return nil
}

func (o *fakeOutbox) Deliveries(ctx context.Context, accountID string, kind domain.ResourceKind, resourceID string) ([]ports.Delivery, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var its []*outboxItem
	for _, it := range o.items {
		e := it.d.Event
		if e.AccountID == accountID && e.Kind == kind && e.ResourceID == resourceID {
			its = append(its, it)
		}
	}
	slices.SortFunc(its, func(a, b *outboxItem) int {
		return cmp.Or(a.d.Event.CreatedAt.Compare(b.d.Event.CreatedAt), cmp.Compare(a.seq, b.seq))
	})
	out := []ports.Delivery{}
	for _, it := range its {
		out = append(out, copyDelivery(it.d))
	}
	return out, nil
}

func (o *fakeOutbox) get(id string) ports.Delivery {
	o.mu.Lock()
	defer o.mu.Unlock()
	return copyDelivery(o.items[id].d)
}

func (o *fakeOutbox) owner(id string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.items[id].owner
}

func (o *fakeOutbox) claims(owner string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.claimedBy[owner]
}

func (o *fakeOutbox) count(s ports.DeliveryStatus) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, it := range o.items {
		if it.d.Status == s {
			n++
		}
	}
	return n
}

// fakeEncoder stands in for the HTTP adapter's encoder: the event's id and type as JSON.
type fakeEncoder struct{}

func (fakeEncoder) EncodeEvent(e domain.Event) ([]byte, error) {
	return json.Marshal(map[string]string{"id": e.ID, "type": e.Type, "createdAt": e.CreatedAt.Format(time.RFC3339Nano)})
}

// sentMessage is a message as the fake sender saw it, with the context of its call.
type sentMessage struct {
	ports.WebhookMessage
	Ctx context.Context
}

type senderReply func(m sentMessage) (ports.WebhookResponse, error)

// senderAnswer is a sender's answer to code with the verdict the port gives it (the webhook
// adapter's tests pin its own reading).
func senderAnswer(code int) ports.WebhookResponse {
	v := ports.WebhookRetry
	switch {
	case code >= 200 && code <= 299:
		v = ports.WebhookDelivered
	case code == 410:
		v = ports.WebhookGone
	}
	return ports.WebhookResponse{StatusCode: code, Verdict: v}
}

// fakeSender answers scripted replies in order, then the fallback (200 when none). It counts
// sends in flight, overall and per event, to catch a delivery sent twice at once.
type fakeSender struct {
	mu       sync.Mutex
	replies  []senderReply
	fallback func(ports.WebhookMessage) (ports.WebhookResponse, error)
	delay    time.Duration
	msgs     []ports.WebhookMessage
	inFlight map[string]int
	current  atomic.Int64

	maxInFlight atomic.Int64
	overlap     atomic.Int64
}

// script queues replies; a reply may also take the sentMessage form to see the context.
func (s *fakeSender) script(replies ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range replies {
		switch f := r.(type) {
		case func(ports.WebhookMessage) (ports.WebhookResponse, error):
			s.replies = append(s.replies, func(m sentMessage) (ports.WebhookResponse, error) { return f(m.WebhookMessage) })
		case func(sentMessage) (ports.WebhookResponse, error):
			s.replies = append(s.replies, f)
		default:
			panic(fmt.Sprintf("fakeSender.script: %T", r))
		}
	}
}

func (s *fakeSender) Send(ctx context.Context, m ports.WebhookMessage) (ports.WebhookResponse, error) {
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	if s.inFlight == nil {
		s.inFlight = map[string]int{}
	}
	s.inFlight[m.EventID]++
	if s.inFlight[m.EventID] > 1 {
		s.overlap.Add(1)
	}
	var reply senderReply
	if len(s.replies) > 0 {
		reply, s.replies = s.replies[0], s.replies[1:]
	}
	fallback := s.fallback
	s.mu.Unlock()
	now := s.current.Add(1)
	for {
		old := s.maxInFlight.Load()
		if now <= old || s.maxInFlight.CompareAndSwap(old, now) {
			break
		}
	}
	defer func() {
		s.current.Add(-1)
		s.mu.Lock()
		s.inFlight[m.EventID]--
		s.mu.Unlock()
	}()
	if s.delay > 0 {
		time.Sleep(s.delay)
	}
	switch {
	case reply != nil:
		return reply(sentMessage{WebhookMessage: m, Ctx: ctx})
	case fallback != nil:
		return fallback(m)
	}
	return senderAnswer(200), nil
}

func (s *fakeSender) sent() []ports.WebhookMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.msgs)
}

// fakeDirectory is a PIX directory that cannot answer: every look-up fails with err.
type fakeDirectory struct{ err error }

func (d fakeDirectory) Resolve(context.Context, domain.PixKey) (domain.AccountHolder, error) {
	return domain.AccountHolder{}, d.err
}

// fakeSigner records what it signs and writes a token that names it, or fails with err when
// set.
type fakeSigner struct {
	mu     sync.Mutex
	signed []ports.PixLocationPayload
	err    error
}

func (s *fakeSigner) Sign(_ context.Context, p ports.PixLocationPayload) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return "", s.err
	}
	s.signed = append(s.signed, p)
	return fmt.Sprintf("jws-%d-%s-%s-%d", len(s.signed), p.Cob.Location.ID, p.Cob.Status, p.Cob.Revision), nil
}

func (s *fakeSigner) KeySet() []byte { return []byte(`{"keys":[]}`) }

// loopbackResolver resolves every name to 127.0.0.1, for the real webhook sender of the
// integration tests: no test request leaves the machine.
type loopbackResolver struct{}

func (loopbackResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}
