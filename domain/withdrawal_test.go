package domain_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// documentedWdTable is the withdrawal state table of docs/API.md, States and transitions.
var documentedWdTable = []arrow[domain.WithdrawalStatus]{
	{domain.WdPending, domain.WdProcessing},
	{domain.WdPending, domain.WdCanceled},
	{domain.WdPending, domain.WdFailed},
	{domain.WdProcessing, domain.WdProcessed},
	{domain.WdProcessing, domain.WdFailed},
	{domain.WdProcessing, domain.WdRejected},
	{domain.WdProcessed, domain.WdRefunded},
}

func TestWithdrawalStatuses(t *testing.T) {
	want := []domain.WithdrawalStatus{"PENDING", "PROCESSING", "PROCESSED", "FAILED", "CANCELED", "REFUNDED", "REJECTED"}
	if got := domain.WithdrawalStatuses(); !sameElements(got, want) {
		t.Fatalf("WithdrawalStatuses() = %v, want %v", got, want)
	}
	final := []domain.WithdrawalStatus{domain.WdCanceled, domain.WdFailed, domain.WdRejected, domain.WdRefunded}
	holds := []domain.WithdrawalStatus{domain.WdPending, domain.WdProcessing, domain.WdProcessed}
	for _, s := range want {
		t.Run(string(s)+" is final and holds money as docs/API.md, Ledger says", func(t *testing.T) {
			if got := s.Final(); got != slices.Contains(final, s) {
				t.Fatalf("%s.Final() = %v", s, got)
			}
			if got := s.HoldsMoney(); got != slices.Contains(holds, s) {
				t.Fatalf("%s.HoldsMoney() = %v", s, got)
			}
			leaves := false
			for _, a := range documentedWdTable {
				leaves = leaves || a.from == s
			}
			if leaves == s.Final() {
				t.Fatalf("%s: Final() %v but arrows leave it: %v", s, s.Final(), leaves)
			}
		})
	}
}

func TestWithdrawalCanMoveMatchesTheDocumentedTable(t *testing.T) {
	for _, from := range domain.WithdrawalStatuses() {
		for _, to := range domain.WithdrawalStatuses() {
			want := slices.Contains(documentedWdTable, arrow[domain.WithdrawalStatus]{from, to})
			if got := domain.WithdrawalCanMove(from, to); got != want {
				t.Errorf("WithdrawalCanMove(%s, %s) = %v, want %v", from, to, got, want)
			}
		}
	}
	t.Run("every trigger method makes one arrow of the table and every arrow has a trigger", func(t *testing.T) {
		var made []arrow[domain.WithdrawalStatus]
		for _, tr := range wdTriggers {
			made = append(made, arrow[domain.WithdrawalStatus]{tr.from, tr.to})
		}
		if !sameElements(made, documentedWdTable) {
			t.Fatalf("triggers make %v, the documented table is %v", made, documentedWdTable)
		}
	})
}

func TestWithdrawalTriggersAllowedByTheTable(t *testing.T) {
	for _, path := range wdPaths {
		for _, tr := range wdTriggers {
			if tr.from != path.want {
				continue
			}
			t.Run(tr.name+" moves "+path.name+" to "+string(tr.to), func(t *testing.T) {
				w, now := wdAt(t, validPayout(), path)
				before := wdStateOf(w)
				if err := tr.fire(w, now.Add(1500*time.Millisecond)); err != nil {
					t.Fatalf("%s: %v", tr.name, err)
				}
				if w.Status() != tr.to {
					t.Fatalf("status %s, want %s", w.Status(), tr.to)
				}
				h := w.History()
				checkHistory(t, h, w.CreatedAt(), w.UpdatedAt(), w.Status(), len(before.rec.History)+1)
				if !reflect.DeepEqual(h[:len(h)-1], before.rec.History) {
					t.Fatal("earlier history changed")
				}
				events := w.Events()
				if len(events) != len(before.events)+1 {
					t.Fatalf("%d events, want %d", len(events), len(before.events)+1)
				}
				ev := events[len(events)-1]
				if want := "withdrawal." + strings.ToLower(string(tr.to)); ev.Type != want {
					t.Fatalf("event type %q, want %q", ev.Type, want)
				}
				if ev.Kind != domain.ResourceWithdrawal || ev.ResourceID != w.ID() || ev.AccountID != accountID ||
					ev.WebhookURL != webhookURL || !ev.CreatedAt.Equal(w.UpdatedAt()) || ev.Transaction != nil ||
					!domain.IsUUIDv4(ev.ID) {
					t.Fatalf("event %+v", ev)
				}
				if ev.Withdrawal == nil || !reflect.DeepEqual(ev.Withdrawal.Record(), w.Record()) {
					t.Fatal("the event snapshot is not the withdrawal right after the transition")
				}
			})
		}
	}
}

func TestWithdrawalTriggersRefusedByTheTable(t *testing.T) {
	for _, path := range wdPaths {
		for _, tr := range wdTriggers {
			if tr.from == path.want {
				continue
			}
			t.Run(tr.name+" is refused for "+path.name+" and changes nothing", func(t *testing.T) {
				w, now := wdAt(t, validPayout(), path)
				before := wdStateOf(w)
				err := tr.fire(w, now.Add(time.Hour))
				checkInvalidTransition(t, err, "withdrawal", string(path.want), string(tr.to))
				if after := wdStateOf(w); !reflect.DeepEqual(after, before) {
					t.Fatalf("a refused %s changed the withdrawal:\n got %+v\nwant %+v", tr.name, after, before)
				}
			})
		}
	}
}

func TestWithdrawalFinalStatusesRefuseEveryTrigger(t *testing.T) {
	for _, path := range wdPaths {
		if !path.want.Final() {
			continue
		}
		t.Run(path.name+" refuses every trigger", func(t *testing.T) {
			w, now := wdAt(t, validPayout(), path)
			before := wdStateOf(w)
			for _, tr := range wdTriggers {
				if err := tr.fire(w, now.Add(time.Hour)); !errors.Is(err, domain.ErrInvalidTransition) {
					t.Fatalf("%s: error %v, want ErrInvalidTransition", tr.name, err)
				}
			}
			if !reflect.DeepEqual(wdStateOf(w), before) {
				t.Fatal("refused triggers changed a final withdrawal")
			}
		})
	}
}

func TestWithdrawalFieldsSetByTransitions(t *testing.T) {
	t.Run("a new withdrawal has nothing withdrawn yet", func(t *testing.T) {
		w := newWd(t, validPayout(), base)
		if w.AmountWithdrawn() != nil || w.ProcessedDate() != nil || w.EndToEnd() != "" || w.ErrorMessage() != "" {
			t.Fatalf("%+v", w.Record())
		}
	})

	t.Run("Complete sets amountWithdrawn, processedDate and endToEnd", func(t *testing.T) {
		w, now := wdAt(t, validPayout(), wdPaths[1])
		at := now.Add(time.Second + 987654*time.Nanosecond).In(saoPaulo)
		if err := w.Complete("E99999999202611221119payout0001", at); err != nil {
			t.Fatal(err)
		}
		if w.AmountWithdrawn() == nil || *w.AmountWithdrawn() != validPayout().Amount {
			t.Fatalf("AmountWithdrawn() = %v", w.AmountWithdrawn())
		}
		if d := w.ProcessedDate(); d == nil || !d.Equal(ms(at)) || d.Location() != time.UTC {
			t.Fatalf("ProcessedDate() = %v, want %v", d, ms(at))
		}
		if w.EndToEnd() != "E99999999202611221119payout0001" {
			t.Fatalf("EndToEnd() = %q", w.EndToEnd())
		}
	})

	for _, c := range []struct {
		path wdPath
		want string
	}{
		{wdPaths[4], "receiving institution unavailable"},
		{wdPaths[5], "PIX key owner mismatch"},
		{wdPaths[7], "chave_invalida: A chave informada não existe"},
	} {
		t.Run(c.path.name+" carries its errorMessage", func(t *testing.T) {
			w, _ := wdAt(t, validPayout(), c.path)
			if w.ErrorMessage() != c.want {
				t.Fatalf("ErrorMessage() = %q, want %q", w.ErrorMessage(), c.want)
			}
			if w.AmountWithdrawn() != nil {
				t.Fatal("a withdrawal that never left has an amount withdrawn")
			}
		})
	}

	t.Run("a refunded withdrawal keeps what was withdrawn", func(t *testing.T) {
		w, _ := wdAt(t, validPayout(), wdPaths[6])
		if w.AmountWithdrawn() == nil || w.ProcessedDate() == nil || w.EndToEnd() == "" {
			t.Fatalf("%+v", w.Record())
		}
	})

	t.Run("a withdrawal without a webhook URL raises no events", func(t *testing.T) {
		p := validPayout()
		p.WebhookURL = ""
		for _, path := range wdPaths {
			w, _ := wdAt(t, p, path)
			if len(w.Events()) != 0 {
				t.Fatalf("%s: %d events", path.name, len(w.Events()))
			}
		}
	})

	t.Run("snapshots are not changed by later transitions", func(t *testing.T) {
		w, _ := wdAt(t, validPayout(), wdPaths[6])
		events := w.Events()
		if len(events) != 3 {
			t.Fatalf("%d events", len(events))
		}
		wantStatus := []domain.WithdrawalStatus{domain.WdProcessing, domain.WdProcessed, domain.WdRefunded}
		for i, ev := range events {
			if ev.Withdrawal.Status() != wantStatus[i] || len(ev.Withdrawal.History()) != i+2 {
				t.Fatalf("event %d snapshot in %s with %d entries", i, ev.Withdrawal.Status(), len(ev.Withdrawal.History()))
			}
		}
		if events[0].Withdrawal.AmountWithdrawn() != nil {
			t.Fatal("the PROCESSING snapshot shows the later amount withdrawn")
		}
		w.MarkStored(w.Version() + 1)
		if len(w.Events()) != 0 {
			t.Fatal("MarkStored kept events")
		}
	})
}

func TestWithdrawalTotal(t *testing.T) {
	for _, c := range []struct {
		amount, fee, want domain.Cents
	}{
		{5_000, 150, 5_150},
		{1, 0, 1},
		{10_000_000, 0, 10_000_000},
		{10_000_000, 10_000_000, 20_000_000},
	} {
		t.Run("a withdrawal takes out its amount plus its fee", func(t *testing.T) {
			p := validPayout()
			p.Amount, p.Fee = c.amount, c.fee
			w := newWd(t, p, base)
			if w.Total() != c.want || w.Amount() != c.amount || w.Fee() != c.fee {
				t.Fatalf("Total %d Amount %d Fee %d, want %d %d %d", w.Total(), w.Amount(), w.Fee(), c.want, c.amount, c.fee)
			}
		})
	}
}

func TestNewWithdrawal(t *testing.T) {
	cases := []struct {
		name    string
		change  func(p *domain.Payout)
		wantErr []error // nil: accepted
	}{
		{"a valid payout is accepted", func(p *domain.Payout) {}, nil},
		{"an amount of 0 is refused", func(p *domain.Payout) { p.Amount = 0 }, []error{domain.ErrInvalidOrder}},
		{"an amount of 1 is accepted", func(p *domain.Payout) { p.Amount = 1 }, nil},
		{"an amount of 10000000 is accepted", func(p *domain.Payout) { p.Amount = 10_000_000 }, nil},
		{"an amount of 10000001 is refused", func(p *domain.Payout) { p.Amount = 10_000_001 }, []error{domain.ErrInvalidOrder}},
		{"a negative fee is refused", func(p *domain.Payout) { p.Fee = -1 }, []error{domain.ErrInvalidOrder}},
		{"a fee of 0 is accepted", func(p *domain.Payout) { p.Fee = 0 }, nil},
		{"a key that does not match its type is refused", func(p *domain.Payout) {
			p.PixKey = domain.PixKey{Type: domain.PixKeyEmail, Key: "not-an-email"}
		}, []error{domain.ErrInvalidOrder, domain.ErrInvalidPixKey}},
		{"a CPF key holding a CNPJ is refused", func(p *domain.Payout) {
			p.PixKey = domain.PixKey{Type: domain.PixKeyCPF, Key: "11222333000181"}
		}, []error{domain.ErrInvalidOrder, domain.ErrInvalidPixKey}},
		{"an unknown key type is refused", func(p *domain.Payout) {
			p.PixKey = domain.PixKey{Type: "IBAN", Key: "BR1500000000000010932840814P2"}
		}, []error{domain.ErrInvalidOrder, domain.ErrInvalidPixKeyType}},
		{"an empty key is refused", func(p *domain.Payout) { p.PixKey = domain.PixKey{} }, []error{domain.ErrInvalidOrder, domain.ErrInvalidPixKeyType}},
		{"a phone key is accepted", func(p *domain.Payout) {
			p.PixKey = domain.PixKey{Type: domain.PixKeyPhone, Key: "+5511987654321"}
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := validPayout()
			c.change(&p)
			w, err := domain.NewWithdrawal(newID(), accountID, acquirer, p, validIdempotency(), base)
			if c.wantErr == nil {
				if err != nil || w == nil {
					t.Fatalf("NewWithdrawal: %v", err)
				}
				return
			}
			if w != nil {
				t.Fatalf("NewWithdrawal returned %+v with %v", w.Record(), err)
			}
			for _, want := range c.wantErr {
				if !errors.Is(err, want) {
					t.Fatalf("error %v does not match %v", err, want)
				}
			}
		})
	}

	t.Run("an amount out of range reports the amount", func(t *testing.T) {
		p := validPayout()
		p.Amount = 10_000_001
		_, err := domain.NewWithdrawal(newID(), accountID, acquirer, p, validIdempotency(), base)
		var oor domain.ErrAmountOutOfRange
		if !errors.As(err, &oor) || oor.Amount != 10_000_001 {
			t.Fatalf("error %v", err)
		}
	})

	for _, c := range []struct{ name, id, account, acq string }{
		{"an empty id is refused", "", accountID, acquirer},
		{"an empty account is refused", newID(), "", acquirer},
		{"an empty acquirer is refused", newID(), accountID, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := domain.NewWithdrawal(c.id, c.account, c.acq, validPayout(), validIdempotency(), base); !errors.Is(err, domain.ErrInvalidOrder) {
				t.Fatalf("error %v, want ErrInvalidOrder", err)
			}
		})
	}

	t.Run("a new withdrawal is PENDING, created now in UTC at millisecond precision", func(t *testing.T) {
		id := newID()
		p := validPayout()
		w, err := domain.NewWithdrawal(id, accountID, acquirer, p, validIdempotency(), base.In(saoPaulo))
		if err != nil {
			t.Fatal(err)
		}
		if w.ID() != id || w.AccountID() != accountID || w.Acquirer() != acquirer ||
			!reflect.DeepEqual(w.Payout(), p) || w.Idempotency() != validIdempotency() {
			t.Fatalf("getters do not return the inputs: %+v", w.Record())
		}
		if w.Status() != domain.WdPending || len(w.Events()) != 0 || w.Version() != 0 {
			t.Fatalf("status %s, %d events, version %d", w.Status(), len(w.Events()), w.Version())
		}
		if !w.CreatedAt().Equal(ms(base)) || w.CreatedAt().Location() != time.UTC {
			t.Fatalf("CreatedAt() = %v", w.CreatedAt())
		}
		checkHistory(t, w.History(), w.CreatedAt(), w.UpdatedAt(), domain.WdPending, 1)
	})
}

// NewPixKey documents that it normalises keys (CPF and CNPJ without punctuation, e-mail lower
// case, EVP lower case). A withdrawal validates its key with NewPixKey, so it should keep the
// normalised key rather than the raw input.
func TestNewWithdrawalKeepsTheNormalisedPixKey(t *testing.T) {
	for _, c := range []struct {
		name string
		in   domain.PixKey
		want string
	}{
		{"a punctuated CPF key loses its punctuation", domain.PixKey{Type: domain.PixKeyCPF, Key: "529.982.247-25"}, "52998224725"},
		{"a lower-case alphanumeric CNPJ key is upper-cased", domain.PixKey{Type: domain.PixKeyCNPJ, Key: "12.abc.345/01de-35"}, "12ABC34501DE35"},
		{"a mixed-case e-mail key is lower-cased", domain.PixKey{Type: domain.PixKeyEmail, Key: "Fulano@Example.COM"}, "fulano@example.com"},
		{"an upper-case EVP key is lower-cased", domain.PixKey{Type: domain.PixKeyEVP, Key: "123E4567-E89B-42D3-A456-426614174000"}, "123e4567-e89b-42d3-a456-426614174000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := validPayout()
			p.PixKey = c.in
			w := newWd(t, p, base)
			if got := w.Payout().PixKey; got.Key != c.want || got.Type != c.in.Type {
				t.Fatalf("Payout().PixKey = %+v, want {%s %s}", got, c.in.Type, c.want)
			}
		})
	}
}

func TestWithdrawalHistory(t *testing.T) {
	t.Run("dates never go backwards when the clock steps back", func(t *testing.T) {
		w := newWd(t, validPayout(), base)
		if err := w.StartProcessing(base.Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := w.Complete("E1", base.Add(2*time.Second)); err != nil {
			t.Fatal(err)
		}
		h := w.History()
		checkHistory(t, h, w.CreatedAt(), w.UpdatedAt(), domain.WdProcessed, 3)
		if d := domain.DurationMillis(h, 0); d == nil || *d != 10_000 {
			t.Fatalf("duration of PENDING %v, want 10000", deref(d))
		}
		if d := domain.DurationMillis(h, 1); d == nil || *d != 0 {
			t.Fatalf("duration of PROCESSING %v, want 0", deref(d))
		}
	})
	t.Run("History returns a copy the caller may change", func(t *testing.T) {
		w, _ := wdAt(t, validPayout(), wdPaths[2])
		h := w.History()
		h[0].Status = domain.WdFailed
		checkHistory(t, w.History(), w.CreatedAt(), w.UpdatedAt(), domain.WdProcessed, 3)
	})
}

func TestWithdrawalRecordRoundTrip(t *testing.T) {
	for _, path := range wdPaths {
		t.Run(path.name+" survives Record and UnmarshalWithdrawalFromDatabase", func(t *testing.T) {
			w, now := wdAt(t, validPayout(), path)
			w.MarkStored(3)
			rec := w.Record()
			back := domain.UnmarshalWithdrawalFromDatabase(rec)
			if !reflect.DeepEqual(back.Record(), rec) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", back.Record(), rec)
			}
			if back.Version() != 3 || len(back.Events()) != 0 || !back.UpdatedAt().Equal(w.UpdatedAt()) {
				t.Fatal("getters differ after the round trip")
			}
			for _, tr := range wdTriggers {
				b := domain.UnmarshalWithdrawalFromDatabase(w.Record())
				if err := tr.fire(b, now.Add(time.Second)); (err == nil) != (tr.from == path.want) {
					t.Fatalf("%s on a rebuilt %s: %v", tr.name, path.want, err)
				}
			}
		})
	}
	t.Run("the creation date of a record comes back in UTC", func(t *testing.T) {
		rec := newWd(t, validPayout(), base).Record()
		rec.CreatedAt = rec.CreatedAt.In(saoPaulo)
		if got := domain.UnmarshalWithdrawalFromDatabase(rec).CreatedAt(); got.Location() != time.UTC {
			t.Fatalf("CreatedAt() = %v", got)
		}
	})
}
