package pricing

import (
	"math"
	"strings"
	"testing"
)

// TestShippedTableCosts prices usages of the shipped rows to the
// picodollar, as a person reads them off the table: gpt-4o-mini at $0.15
// input, $0.075 cached input and $0.60 output per 1M tokens; its dated
// name by pattern; text-embedding-3-small at $0.02; claude-sonnet-4-5 at
// $3 input, $3.75 cache write, $0.30 cache read and $15 output; the
// batch discount of 50%.
func TestShippedTableCosts(t *testing.T) {
	table, err := NewTable(nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		provider, model string
		u               Usage
		batch           bool
		usd             string
	}{
		// 1000 * 0.15 + 500 * 0.60 = 450 microdollars.
		{"openai", "gpt-4o-mini", Usage{Prompt: 1000, Completion: 500}, false, "0.00045"},
		// 600 * 0.15 + 400 * 0.075 + 500 * 0.60 = 420 microdollars.
		{"openai", "gpt-4o-mini-2024-07-18", Usage{Prompt: 1000, Cached: 400, Completion: 500}, false, "0.00042"},
		// Half of 450 microdollars.
		{"openai", "gpt-4o-mini", Usage{Prompt: 1000, Completion: 500}, true, "0.000225"},
		// 7 * 0.15 + 3 * 0.60 = 2.85 microdollars; the batch's half 1.425.
		{"openai", "gpt-4o-mini", Usage{Prompt: 7, Completion: 3}, false, "0.00000285"},
		{"openai", "gpt-4o-mini", Usage{Prompt: 7, Completion: 3}, true, "0.000001425"},
		// 12345 * 0.02 = 246.9 microdollars.
		{"openai", "text-embedding-3-small", Usage{Prompt: 12345}, false, "0.0002469"},
		// 100 * 3 + 200 * 3.75 + 700 * 0.30 + 50 * 15 = 2010 microdollars.
		{"anthropic", "claude-sonnet-4-5-20250929", Usage{Prompt: 1000, CacheWrite: 200, Cached: 700, Completion: 50}, false, "0.00201"},
		// Reasoning at the output price: 10 * 2.5 + 100 * 10 = 1025.
		{"openai", "gpt-4o", Usage{Prompt: 10, Completion: 100, Reasoning: 60}, false, "0.001025"},
	}
	for _, c := range cases {
		row := table.Lookup(c.provider, c.model)
		if row == nil {
			t.Fatalf("%s %s is unpriced", c.provider, c.model)
		}
		if got := USD(row.Cost(c.u, c.batch)); got != c.usd {
			t.Errorf("%s %+v batch %v: %s, want %s", c.model, c.u, c.batch, got, c.usd)
		}
	}
	for _, unpriced := range [][2]string{{"openai", "gpt-4o-mini-tts"}, {"anthropic", "gpt-4o-mini"}, {"reference", "reference"}, {"openai", "o9"}} {
		if row := table.Lookup(unpriced[0], unpriced[1]); row != nil {
			t.Errorf("%s %s priced as %s", unpriced[0], unpriced[1], row.Model)
		}
	}
}

// TestOperatorRows: an operator's row comes before the shipped one of the
// same name, a row for any provider prices the reference engine, and bad
// prices are refused with the field named.
func TestOperatorRows(t *testing.T) {
	table, err := NewTable([]Row{
		{Providers: []string{"openai"}, Model: "gpt-4o-mini", Input: "1", Output: "2"},
		{Providers: []string{"*"}, Model: "reference", Patterns: []string{"reference-*"}, Input: "0.000001", Output: "10000"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := USD(table.Lookup("openai", "gpt-4o-mini").Cost(Usage{Prompt: 1, Completion: 1}, false)); got != "0.000003" {
		t.Errorf("overridden gpt-4o-mini: %s", got)
	}
	if got := USD(table.Lookup("reference", "reference-embedding").Cost(Usage{Prompt: 1, Completion: MaxTokens + 5}, false)); got != "1000000.000000000001" {
		t.Errorf("reference at the bounds: %s", got)
	}
	for _, bad := range []struct {
		row  Row
		want string
	}{
		{Row{Providers: []string{"openai"}, Model: "m", Input: "0.1234567"}, "input"},
		{Row{Providers: []string{"openai"}, Model: "m", Input: "1", Output: "10001"}, "output"},
		{Row{Providers: []string{"openai"}, Model: "m", Input: "-1"}, "input"},
		{Row{Providers: []string{"openai"}, Model: "m", Input: "1", CachedInput: "1e3"}, "cached_input"},
		{Row{Providers: []string{"openai"}, Model: "m"}, "input"},
		{Row{Providers: []string{"openai"}, Model: "m", Input: "1", BatchDiscount: 101}, "batch_discount"},
		{Row{Model: "m", Input: "1"}, "providers"},
	} {
		if _, err := NewTable([]Row{bad.row}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v, want an error naming %s", bad.row, err, bad.want)
		}
	}
}

// TestUSD writes picodollars exactly.
func TestUSD(t *testing.T) {
	for pico, want := range map[int64]string{0: "0", 1: "0.000000000001", 1_500_000: "0.0000015", 2_000_000_000_000: "2", -450_000_000: "-0.00045", -3_000_000_000_001: "-3.000000000001", math.MaxInt64: "9223372.036854775807", math.MinInt64: "-9223372.036854775808"} {
		if got := USD(pico); got != want {
			t.Errorf("USD(%d) = %s, want %s", pico, got, want)
		}
	}
}
