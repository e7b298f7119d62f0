package moneycheck

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// Config sizes a run. Zero fields take the defaults, which make a run of a few seconds of load
// on two accounts, sized so that a change posted in two steps is caught on a FerretDB store.
type Config struct {
	// Seed draws every choice of the clients. The report names it; the same seed repeats the
	// same workload (not the same interleaving).
	Seed int64
	// Duration bounds the load: clients start no operation after it (default 5s).
	Duration time.Duration
	// Accounts is how many merchants the run sells for (default 2); each has its own clients.
	Accounts int
	// Per account: Payers sell and pay charges and refund or dispute them (default 3),
	// Withdrawers withdraw (default 3), Readers read the balance (default 1).
	Payers, Withdrawers, Readers int
	// Bounds of each client's work, whichever of these and Duration comes first: charges per
	// payer (default 25), withdrawals per withdrawer (default 80), reads per reader (default 250).
	ChargesPerPayer, WithdrawalsPerWithdrawer, ReadsPerReader int
	// LinearizabilityTimeout bounds porcupine's search (default 60s); a search that runs out of
	// it is reported as undecided, which fails nothing by itself.
	LinearizabilityTimeout time.Duration
	// ReportDir is where a failed run writes its drawing of the history (default os.TempDir()).
	ReportDir string
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.Accounts, 2)
	def(&c.Payers, 3)
	def(&c.Withdrawers, 3)
	def(&c.Readers, 1)
	def(&c.ChargesPerPayer, 25)
	def(&c.WithdrawalsPerWithdrawer, 80)
	def(&c.ReadsPerReader, 250)
	if c.Duration <= 0 {
		c.Duration = 5 * time.Second
	}
	if c.LinearizabilityTimeout <= 0 {
		c.LinearizabilityTimeout = time.Minute
	}
	return c
}

// opsPerSale is about how many operations a payer makes per charge: the charge, its payment, and
// now and then a second delivery, a late payment, a refund or a dispute and their outcomes.
const opsPerSale = 5

// run is one run in progress.
type run struct {
	cfg       Config
	instances []Instance
	uses      []*useCases
	h         *History
	deadline  time.Time
	accounts  []string
	payee     domain.PixKey // where withdrawals go

	mu       sync.Mutex
	problems []string // what went wrong besides the money: store errors, protocol surprises
}

// problem records something the run did not expect, outside the operations' answers.
func (r *run) problem(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// Run drives the load against the instances (one, or several sharing one store), then judges
// the history and the ledger it left, and answers the report. The error is for a run that could
// not be made or judged (the store failing the checker's own reads); what the run found wrong
// is in the report.
func Run(ctx context.Context, cfg Config, instances ...Instance) (Report, error) {
	if len(instances) == 0 {
		return Report{}, errors.New("moneycheck: no instance to run against")
	}
	for i, in := range instances {
		if in.Transactions == nil || in.Withdrawals == nil || in.Ledger == nil || in.Accounts == nil {
			return Report{}, fmt.Errorf("moneycheck: instance %d lacks a port", i)
		}
	}
	payee, err := domain.NewPixKey(domain.PixKeyEmail, "payee@example.com")
	if err != nil {
		return Report{}, fmt.Errorf("moneycheck: the payee's PIX key: %w", err)
	}
	cfg = cfg.withDefaults()
	r := &run{cfg: cfg, instances: instances, h: newHistory(), payee: payee}
	renderer := newRenderer(cfg.Accounts * cfg.Payers * 2)
	for _, in := range instances {
		u, err := newUseCases(in, renderer, func(err error) { r.problem("reported on the side: %v", err) })
		if err != nil {
			return Report{}, err
		}
		r.uses = append(r.uses, u)
	}
	seeds := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x6d6f6e6579636b)) // "moneyck"
	newRand := func() *rand.Rand { return rand.New(rand.NewPCG(seeds.Uint64(), seeds.Uint64())) }
	var clients []func(context.Context)
	lane := 0
	newClient := func(account string, p *pace) *client {
		c := &client{r: r, lane: lane, account: account, rng: newRand(), pace: p}
		lane++
		return c
	}
	for range cfg.Accounts {
		account := domain.NewID()
		r.accounts = append(r.accounts, account)
		p := newPace(cfg.Payers, cfg.Payers*cfg.ChargesPerPayer*opsPerSale)
		for range cfg.Payers {
			c := newClient(account, p)
			c.twin = newClient(account, p)
			c.sells, c.twin.sells = true, true
			clients = append(clients, c.payer)
		}
		for range cfg.Withdrawers {
			clients = append(clients, newClient(account, p).withdrawer)
		}
		for range cfg.Readers {
			clients = append(clients, newClient(account, p).reader)
		}
	}

	r.deadline = time.Now().Add(cfg.Duration)
	var wg sync.WaitGroup
	for _, work := range clients {
		wg.Go(func() { work(ctx) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Report{}, fmt.Errorf("moneycheck: the run was canceled: %w", err)
	}
	return r.judge(ctx, r.h.now())
}
