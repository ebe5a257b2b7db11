package translate

import (
	"math"
	"testing"
)

// TestNewUsageSaturates: a total past the int range is the largest int,
// not a negative one.
func TestNewUsageSaturates(t *testing.T) {
	if u := NewUsage(math.MaxInt, 9e18, 0, 0); u.TotalTokens != math.MaxInt {
		t.Fatalf("total %d", u.TotalTokens)
	}
}
