package porttest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports/porttest"
)

var errBoom = errors.New("boom")

func TestFaults(t *testing.T) {
	ctx := context.Background()
	t.Run("the nth call of a method fails, and only it", func(t *testing.T) {
		t.Parallel()
		r := porttest.NewAccounts(memory.NewAccounts())
		r.Fail("GetAccount", 2, errBoom)
		var got []error
		for range 3 {
			_, err := r.GetAccount(ctx, "nobody")
			got = append(got, err)
		}
		if !errors.Is(got[0], domain.ErrNotFound) || !errors.Is(got[1], errBoom) || !errors.Is(got[2], domain.ErrNotFound) {
			t.Fatalf("answers %v", got)
		}
		if n := r.Calls("GetAccount"); n != 3 {
			t.Fatalf("%d calls counted, want 3", n)
		}
	})
	t.Run("every call fails until the rules are cleared", func(t *testing.T) {
		t.Parallel()
		r := porttest.NewAccounts(memory.NewAccounts())
		r.FailAll(errBoom)
		if _, err := r.ListAccounts(ctx); !errors.Is(err, errBoom) {
			t.Fatalf("= %v", err)
		}
		r.Clear()
		if _, err := r.ListAccounts(ctx); err != nil {
			t.Fatalf("after Clear = %v", err)
		}
	})
	t.Run("a rule for the nth call keeps its place when the counts are reset", func(t *testing.T) {
		t.Parallel()
		r := porttest.NewAccounts(memory.NewAccounts())
		_, _ = r.ListAccounts(ctx)
		r.Fail("ListAccounts", 2, errBoom)
		r.ResetCalls()
		if _, err := r.ListAccounts(ctx); err != nil {
			t.Fatalf("first call after reset = %v", err)
		}
		if _, err := r.ListAccounts(ctx); !errors.Is(err, errBoom) {
			t.Fatalf("second call after reset = %v", err)
		}
	})
	t.Run("a delayed call answers its context's end", func(t *testing.T) {
		t.Parallel()
		r := porttest.NewAccounts(memory.NewAccounts())
		r.Delay("ListAccounts", 1, time.Hour)
		ctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
		defer cancel()
		if _, err := r.ListAccounts(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("= %v", err)
		}
	})
	t.Run("a hook runs before its call", func(t *testing.T) {
		t.Parallel()
		r := porttest.NewTransactions(memory.NewStore().Transactions())
		ran := 0
		r.Before("Find", 1, func() { ran++ })
		_, _ = r.Find(ctx, "x")
		_, _ = r.Find(ctx, "x")
		if ran != 1 {
			t.Fatalf("hook ran %d times", ran)
		}
	})
}
