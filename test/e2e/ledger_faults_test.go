package e2e_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestKilledBetweenAStatusChangeAndItsEntriesLeavesTheLedgerWhole kills pixgate with SIGKILL,
// three times, while four clients drive a mix of money movements through it on MongoDB
// (FerretDB): sandbox payments, partial refunds, MED disputes opened and rejected, withdrawals.
// Between each kill and the restart it counts what the kill left half done in the database
// (resource documents whose postings were not posted yet, checked entries whose status change
// was not known to be stored). After the last restart, once Recover and the sandbox have
// settled everything, `pixgate ledger verify`, run as an operator runs it, exits 0 with an OK
// summary; GET /balance is what the statement adds up to; and available is not negative unless
// a MED dispute holds money.
func TestKilledBetweenAStatusChangeAndItsEntriesLeavesTheLedgerWhole(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	p := s.startPixgate("pixgate", nil)
	db := s.ledgerDB()

	const rounds, workers, chargesPerWorker, opsPerWorker = 3, 4, 4, 60
	var total mixTally
	var leftBehind []leftovers
	for round := range rounds {
		// Charges of the round, created before the clients start: creating one moves no money.
		charges := make([][]*mixCharge, workers)
		for w := range charges {
			for i := range chargesPerWorker {
				code := fmt.Sprintf("ledger-kill-%s-%d-%d-%d", runTag, round, w, i)
				tx := p.charge(int64(20_000+1_000*i+w), code)
				charges[w] = append(charges[w], &mixCharge{id: tx["id"].(string), status: "PIX_QRCODE_GENERATED"})
			}
		}
		// Kill once the clients have had a random number of answers, while they still send.
		killAfter := int64(20 + rand.IntN(40))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		var (
			answered atomic.Int64
			tallies  = make([]mixTally, workers)
			wg       sync.WaitGroup
		)
		for w := range workers {
			wg.Go(func() { tallies[w] = driveMix(ctx, p, charges[w], opsPerWorker, &answered) })
		}
		eventually(t, time.Minute, "answers before the kill", func() (bool, string) {
			return answered.Load() >= killAfter, fmt.Sprint(answered.Load(), " answered")
		})
		p.kill()
		wg.Wait()
		cancel()
		var tally mixTally
		for _, tw := range tallies {
			tally.add(tw)
		}
		total.add(tally)
		lctx, lcancel := context.WithTimeout(context.Background(), 30*time.Second)
		left, err := countLeftovers(lctx, db)
		lcancel()
		if err != nil {
			t.Fatalf("count what the kill left: %v", err)
		}
		leftBehind = append(leftBehind, left)
		t.Logf("round %d: killed after %d answers (%s); it left %s", round+1, answered.Load(), tally, left)
		if len(tally.unexpected) > 0 {
			t.Errorf("round %d: unexpected answers: %v", round+1, tally.unexpected)
		}
		p.start()
	}
	t.Logf("in all: %s", total)
	halfDone := slices.ContainsFunc(leftBehind, func(l leftovers) bool { return !l.none() })
	if !halfDone {
		t.Logf("no kill happened to land between a status change and its entries (what each left: %v); the audit below still covers the kills", leftBehind)
	}
	if total.moved() < 10 {
		t.Fatalf("only %d movements of money were acknowledged before the kills: the mix did not run", total.moved())
	}

	// Recover runs at start and then 5 s apart at most (docs/STORAGE.md, "Background work"), and takes
	// what is older than 10 s: what the last kill left has its entries within 30 s of the
	// restart (the restart itself, slow on a busy machine, is not the bound's). Then the
	// sandbox settles what is in progress (1 s, and 3 s apart at most).
	took := s.waitLedgerWhole(30 * time.Second)
	t.Logf("the ledger was whole %v after the last restart", took.Round(100*time.Millisecond))
	s.waitSettled(60 * time.Second)

	v := s.ledgerVerify()
	t.Logf("pixgate ledger verify exited %d:\n%s", v.code, v.output)
	if !v.ok() {
		t.Fatalf("pixgate ledger verify after %d kills exited %d, want 0 and OK", rounds, v.code)
	}

	b := p.wantBalanceIsStatement()
	if b[0] < 0 {
		blocked := p.want(http.StatusOK, "GET", "/transaction?status=BLOCKED&perPage=1", nil).object(t)
		if cents(blocked["total"]) == 0 {
			t.Errorf("available is %d with no MED dispute holding money", b[0])
		}
	}
}

// TestThreeInstancesOnOneStoreNeverOverdraw runs three pixgate containers on one FerretDB,
// whose conditional updates are not atomic across clients but whose unique indexes are. One
// account is funded by 25 sandbox payments, then 50 debits leave at once, spread round-robin
// over the three: 25 withdrawals and 25 partial refunds, each of a transaction of its own and
// with an idempotency key, worth more together than the funds. The accepted ones never add up
// to more than the funds and available is never seen below zero; every other answers 422
// insufficient_balance, or 503 when the store gives up under contention (counted; a 503 may
// or may not have stored its debit, so once Recover has settled them each is retried with its
// key until it is replayed, accepted or refused); without a 503 nothing refused would have fit
// in what was left. Once the sandbox has settled every debit, available is the funds less the
// debits that stood, blocked is 0, GET /balance is what the statement adds up to, and
// `pixgate ledger verify` passes. Last, a ledger broken behind pixgate's back (one entry
// deleted, one amount changed) makes it fail, naming both entries.
func TestThreeInstancesOnOneStoreNeverOverdraw(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	instances := []*pixgate{s.startPixgate("pixgate-1", nil), s.startPixgate("pixgate-2", nil), s.startPixgate("pixgate-3", nil)}
	p := instances[0]

	const n, paid, refundAmount, withdrawAmount = 25, 10_000 + txFee, 6_000, 6_000
	var txIDs []string
	for i := range n {
		tx := p.charge(paid, fmt.Sprintf("ledger-three-%s-%02d", runTag, i))
		id := tx["id"].(string)
		instances[i%3].sandbox("transaction", id, "pay")
		txIDs = append(txIDs, id)
	}
	const funds = n * (paid - txFee)
	p.wantBalance("funded", funds, 0, 0)

	type debit struct {
		kind   string // "withdrawal" or "refund"
		target string // the refunded transaction
		key    string // its idempotency key, so that a 503 can be retried safely
		cost   int64  // what it takes from available
		r      reply
		err    error
	}
	debits := make([]*debit, 0, 2*n)
	for i := range n {
		debits = append(debits,
			&debit{kind: "withdrawal", cost: withdrawAmount + wdFee, key: fmt.Sprintf("ledger-three-%s-w%02d", runTag, i)},
			&debit{kind: "refund", target: txIDs[i], cost: refundAmount, key: fmt.Sprintf("ledger-three-%s-r%02d", runTag, i)})
	}
	rand.Shuffle(len(debits), func(i, j int) { debits[i], debits[j] = debits[j], debits[i] })
	send := func(ctx context.Context, inst *pixgate, d *debit) {
		if d.kind == "withdrawal" {
			d.r, d.err = inst.call(ctx, "POST", "/withdrawal", withdrawalBody(withdrawAmount), "Idempotency-Key", d.key)
		} else {
			d.r, d.err = inst.call(ctx, "POST", "/transaction/"+d.target+"/refund", map[string]any{"amount": refundAmount}, "Idempotency-Key", d.key)
		}
	}
	accepted := func(d *debit) bool {
		return d.err == nil && (d.kind == "withdrawal" && d.r.status == http.StatusCreated || d.kind == "refund" && d.r.status == http.StatusAccepted)
	}
	refused := func(d *debit) bool {
		return d.err == nil && d.r.status == http.StatusUnprocessableEntity && d.r.problem() == "insufficient_balance"
	}
	busy := func(d *debit) bool { return d.err == nil && d.r.status == http.StatusServiceUnavailable }

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Meanwhile available never goes below zero, on any instance.
	stop := make(chan struct{})
	var lowest atomic.Int64
	lowest.Store(funds)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for i := 0; i < 2_000; i++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			r, err := instances[i%3].call(ctx, "GET", "/balance", nil)
			if err != nil || r.status != http.StatusOK {
				continue
			}
			if m, err := r.decode(); err == nil && cents(m["available"]) < lowest.Load() {
				lowest.Store(cents(m["available"]))
			}
		}
	}()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, d := range debits {
		wg.Go(func() {
			<-start
			send(ctx, instances[i%3], d)
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	took := time.Since(began)
	close(stop)
	<-watched

	var nAccepted, nRefused, nBusy int
	var acceptedCost int64
	smallestRefused := int64(-1)
	var retry []*debit
	for _, d := range debits {
		switch {
		case d.err != nil:
			t.Errorf("%s: %v", d.kind, d.err)
		case accepted(d):
			nAccepted++
			acceptedCost += d.cost
		case refused(d):
			nRefused++
			if smallestRefused < 0 || d.cost < smallestRefused {
				smallestRefused = d.cost
			}
		case busy(d):
			nBusy++
			retry = append(retry, d)
		default:
			t.Errorf("%s answered %s, want 201/202, 422 insufficient_balance or 503", d.kind, d.r)
		}
	}
	afterRace := p.balance()
	t.Logf("50 debits at once in %v through 3 instances: %d accepted (%d cents of %d), %d refused insufficient_balance, %d answered 503; lowest available seen %d, %d right after",
		took.Round(time.Millisecond), nAccepted, acceptedCost, funds, nRefused, nBusy, lowest.Load(), afterRace[0])
	if acceptedCost > funds {
		t.Fatalf("debits of %d cents accepted on funds of %d: overdrawn", acceptedCost, funds)
	}
	if lowest.Load() < 0 || afterRace[0] < 0 {
		t.Errorf("available went down to %d during the race, %d after it", lowest.Load(), afterRace[0])
	}
	// A 503 may have stored its debit or not (a write cut by the timeout); its money is held
	// until Recover settles it. So right after the race available is at most the funds less
	// what was accepted.
	if left := funds - acceptedCost; afterRace[0] > left {
		t.Errorf("right after the race available is %d, more than the funds less the accepted debits, %d", afterRace[0], left)
	}
	// Without a 503 nothing is given back: available only went down, so a refused debit found
	// less than it needed, and so does everything after it.
	if nBusy == 0 && smallestRefused >= 0 && funds-acceptedCost >= smallestRefused {
		t.Errorf("a debit of %d cents was refused, yet %d cents were left in the end: it would have fit", smallestRefused, funds-acceptedCost)
	}

	// Once Recover has settled what the 503s left, each is retried with its key (at most five
	// times) until it is accepted, replayed or refused: every debit then has one outcome.
	if len(retry) > 0 {
		s.waitSettled(90 * time.Second)
		var replayed, nowAccepted, nowRefused, stillBusy int
		for i, d := range retry {
			for attempt := 0; attempt < 5; attempt++ {
				send(ctx, instances[i%3], d)
				if !busy(d) {
					break
				}
				time.Sleep(time.Second)
			}
			switch {
			case accepted(d) && d.r.header.Get("Idempotent-Replayed") == "true":
				replayed++
				acceptedCost += d.cost
			case accepted(d):
				nowAccepted++
				acceptedCost += d.cost
			case refused(d):
				nowRefused++
			case busy(d):
				stillBusy++
			default:
				t.Errorf("retry of %s %s answered %v %s", d.kind, d.key, d.err, d.r)
			}
		}
		t.Logf("the %d debits that answered 503, retried with their keys once Recover settled them: %d had been stored (replayed), %d accepted now, %d refused, %d still busy",
			len(retry), replayed, nowAccepted, nowRefused, stillBusy)
		if stillBusy > 0 {
			t.Errorf("%d debits still answer 503 with nothing else going on", stillBusy)
		}
		if acceptedCost > funds {
			t.Fatalf("debits of %d cents accepted on funds of %d: overdrawn", acceptedCost, funds)
		}
	}

	left := funds - acceptedCost
	for _, d := range debits {
		switch {
		case !accepted(d):
		case d.kind == "withdrawal":
			p.waitStatus("/withdrawal/"+d.r.object(t)["id"].(string), "PROCESSED", 60*time.Second)
		default:
			p.waitStatus("/transaction/"+d.target, "PAID", 60*time.Second) // a partial refund, completed
		}
	}
	s.waitSettled(60 * time.Second)
	p.wantBalance("every debit settled", left, 0, 0)
	p.wantBalanceIsStatement()

	v := s.ledgerVerify()
	t.Logf("pixgate ledger verify exited %d:\n%s", v.code, v.output)
	if !v.ok() {
		t.Fatalf("pixgate ledger verify after the race exited %d, want 0 and OK", v.code)
	}

	t.Run("a ledger broken behind pixgate's back fails the audit, naming the entries", func(t *testing.T) {
		s := &stack{t: t, image: s.image, network: s.network, db: s.db, env: s.env}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		entries := s.ledgerDB().Collection("ledger")
		var gone, changed struct {
			ID string `bson:"_id"`
		}
		if err := entries.FindOne(ctx, bson.D{{Key: "type", Value: "withdrawal"}}).Decode(&gone); err != nil {
			t.Fatalf("find a withdrawal entry: %v", err)
		}
		if err := entries.FindOne(ctx, bson.D{{Key: "type", Value: "payment"}}).Decode(&changed); err != nil {
			t.Fatalf("find a payment entry: %v", err)
		}
		if _, err := entries.DeleteOne(ctx, bson.D{{Key: "_id", Value: gone.ID}}); err != nil {
			t.Fatalf("delete entry %s: %v", gone.ID, err)
		}
		if _, err := entries.UpdateOne(ctx, bson.D{{Key: "_id", Value: changed.ID}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "amount", Value: 1}}}}); err != nil {
			t.Fatalf("change entry %s: %v", changed.ID, err)
		}
		v := s.ledgerVerify()
		t.Logf("pixgate ledger verify exited %d:\n%s", v.code, v.output)
		if v.code == 0 || v.ok() {
			t.Fatalf("pixgate ledger verify on a broken ledger exited %d, want a failure", v.code)
		}
		for _, id := range []string{gone.ID, changed.ID} {
			if !strings.Contains(v.output, id) {
				t.Errorf("the audit's output does not name entry %s", id)
			}
		}
	})
}

// mixCharge is one charge a client of the kill test moves along, with its status as the
// client last saw it.
type mixCharge struct {
	id, status string
	refunds    int
}

// mixTally counts the answers one client saw.
type mixTally struct {
	payments, refunds, disputes, releases, withdrawals int // acknowledged movements
	refused, conflicts, busy, lookups, cut             int
	unexpected                                         []string
}

func (m *mixTally) add(o mixTally) {
	m.payments += o.payments
	m.refunds += o.refunds
	m.disputes += o.disputes
	m.releases += o.releases
	m.withdrawals += o.withdrawals
	m.refused += o.refused
	m.conflicts += o.conflicts
	m.busy += o.busy
	m.lookups += o.lookups
	m.cut += o.cut
	m.unexpected = append(m.unexpected, o.unexpected...)
}

func (m mixTally) moved() int {
	return m.payments + m.refunds + m.disputes + m.releases + m.withdrawals
}

func (m mixTally) String() string {
	return fmt.Sprintf("%d payments, %d refunds, %d MED opened, %d MED rejected, %d withdrawals acknowledged; %d refused, %d conflicts, %d busy (503), %d requests cut off",
		m.payments, m.refunds, m.disputes, m.releases, m.withdrawals, m.refused, m.conflicts, m.busy, m.cut)
}

// driveMix moves the client's charges along, one request at a time, choosing each step from
// the status it last saw, for ops requests at most or until pixgate stops answering. Every
// answer counts in answered.
func driveMix(ctx context.Context, p *pixgate, charges []*mixCharge, ops int, answered *atomic.Int64) mixTally {
	var tally mixTally
	for range ops {
		c := charges[rand.IntN(len(charges))]
		var (
			method, path = "POST", ""
			body         any
			want         int
			count        *int
		)
		switch c.status {
		case "PIX_QRCODE_GENERATED":
			path, want, count = "/sandbox/transaction/"+c.id+"/pay", http.StatusOK, &tally.payments
		case "PAID":
			switch rand.IntN(3) {
			case 0:
				c.refunds++
				path, want, count = "/transaction/"+c.id+"/refund", http.StatusAccepted, &tally.refunds
				body = map[string]any{"amount": 1_000 + rand.IntN(2_000)}
			case 1:
				path, want, count = "/sandbox/transaction/"+c.id+"/med/open", http.StatusOK, &tally.disputes
			default:
				path, want, count = "/withdrawal", http.StatusCreated, &tally.withdrawals
				body = withdrawalBody(int64(500 + rand.IntN(1_500)))
			}
		case "BLOCKED":
			path, want, count = "/sandbox/transaction/"+c.id+"/med/reject", http.StatusOK, &tally.releases
		default: // a refund in progress, or a status this mix does not leave: look again
			method, path, want, count = "GET", "/transaction/"+c.id, http.StatusOK, &tally.lookups
		}
		r, err := p.call(ctx, method, path, body)
		if err != nil {
			tally.cut++
			return tally // pixgate is gone
		}
		answered.Add(1)
		switch {
		case r.status == want:
			*count++
			if path != "/withdrawal" {
				if m, err := r.decode(); err == nil {
					c.status, _ = m["status"].(string)
				}
			}
		case r.status == http.StatusUnprocessableEntity && r.problem() == "insufficient_balance":
			tally.refused++
		case r.status == http.StatusUnprocessableEntity && r.problem() == "validation_failed" && strings.Contains(path, "/refund"):
			tally.refused++ // more than is still refundable
		case r.status == http.StatusConflict:
			tally.conflicts++ // a step the status no longer allows (the sandbox settled a refund meanwhile)
			c.status = ""     // look again
		case r.status == http.StatusServiceUnavailable:
			tally.busy++
		default:
			tally.unexpected = append(tally.unexpected, method+" "+path+": "+r.String())
		}
	}
	return tally
}
