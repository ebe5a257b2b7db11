package upstreams

import (
	"math"
	"testing"
)

// TestSumTokensSaturates: sums that fit are exact; one past either end of
// the range stops there (the wrapped 9e18+9e18 a client saw as
// -446744073709551616 is the largest int64).
func TestSumTokensSaturates(t *testing.T) {
	for _, c := range []struct {
		in   []int64
		want int64
	}{
		{[]int64{11, 7}, 18},
		{nil, 0},
		{[]int64{9e18, 9e18}, math.MaxInt64},
		{[]int64{math.MaxInt64 - 1, 1}, math.MaxInt64},
		{[]int64{math.MaxInt64, 1, -5}, math.MaxInt64 - 5},
		{[]int64{math.MinInt64, -1}, math.MinInt64},
		{[]int64{math.MinInt64 + 1, -1}, math.MinInt64},
		{[]int64{-3, 5}, 2},
	} {
		if got := SumTokens(c.in...); got != c.want {
			t.Errorf("SumTokens(%v) = %d, want %d", c.in, got, c.want)
		}
	}
	if got := SumTokens(math.MaxInt, math.MaxInt, 1); got != math.MaxInt {
		t.Errorf("int: %d", got)
	}
}
