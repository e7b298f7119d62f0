package domain_test

import (
	"testing"

	"github.com/pixgate/pixgate/domain"
)

func TestFeePolicy(t *testing.T) {
	for _, c := range []struct {
		name   string
		policy domain.FeePolicy
		amount domain.Cents
		want   domain.Cents
	}{
		{"no policy charges nothing", domain.FeePolicy{}, 10_000, 0},
		{"a share is charged in basis points", domain.FeePolicy{BasisPoints: 199}, 10_000, 199},
		{"a fixed part is added to the share", domain.FeePolicy{FixedCents: 50, BasisPoints: 200}, 12_345, 50 + 247},
		{"a fixed part alone is charged as is", domain.FeePolicy{FixedCents: 80}, 10_000, 80},
		{"half a cent rounds up", domain.FeePolicy{BasisPoints: 100}, 50, 1},
		{"just under half a cent rounds down", domain.FeePolicy{BasisPoints: 1}, 4_999, 0},
		{"exactly half a cent rounds up", domain.FeePolicy{BasisPoints: 1}, 5_000, 1},
		{"0.495 cent rounds down", domain.FeePolicy{BasisPoints: 150}, 33, 0},
		{"0.51 cent rounds up", domain.FeePolicy{BasisPoints: 150}, 34, 1},
		{"1.5 cents round up to 2", domain.FeePolicy{BasisPoints: 150}, 100, 2},
		{"2.5 cents round up to 3", domain.FeePolicy{BasisPoints: 250}, 100, 3},
		{"the fee is capped at the amount", domain.FeePolicy{FixedCents: 500}, 300, 300},
		{"a fee equal to the amount is kept", domain.FeePolicy{FixedCents: 300}, 300, 300},
		{"a share of 100% takes the whole amount", domain.FeePolicy{BasisPoints: 10_000}, 12_345, 12_345},
		{"a share above 100% is capped at the amount", domain.FeePolicy{FixedCents: 1, BasisPoints: 20_000}, 12_345, 12_345},
		{"the largest amount is charged exactly", domain.FeePolicy{FixedCents: 100, BasisPoints: 99}, 10_000_000, 100 + 99_000},
		{"a fee is never negative", domain.FeePolicy{FixedCents: -1_000, BasisPoints: 10}, 10_000, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.policy.For(c.amount); got != c.want {
				t.Fatalf("%+v.For(%d) = %d, want %d", c.policy, c.amount, got, c.want)
			}
		})
	}
	t.Run("the fee lies between 0 and the amount for every amount", func(t *testing.T) {
		policies := []domain.FeePolicy{{}, {FixedCents: 99}, {BasisPoints: 349}, {FixedCents: 40, BasisPoints: 80}, {FixedCents: 10_000_001}}
		for _, p := range policies {
			for a := domain.MinAmount; a <= domain.MaxAmount; a += 7_919 {
				if f := p.For(a); f < 0 || f > a {
					t.Fatalf("%+v.For(%d) = %d", p, a, f)
				}
			}
		}
	})
}
