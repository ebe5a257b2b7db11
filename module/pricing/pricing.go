// Package pricing prices token usage from a table of public prices (USD
// per 1M tokens, by provider and model) shipped with modelgate as data
// (prices.json, each row with the date it was read and its source) and the
// operator's own rows. Costs are exact integers of picodollars (10^-12
// USD): a price in USD per 1M tokens with up to six decimals is a whole
// number of picodollars per token, so no cost drifts as floats would.
package pricing

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

//go:embed prices.json
var shipped []byte

// Row is one price: a model of some providers, in USD per 1M tokens
// (decimal strings, up to six decimals, at most MaxPrice).
type Row struct {
	// Providers are the upstream kinds (openai, anthropic, azure, gemini,
	// bedrock, reference, local) the row prices; "*" prices any.
	Providers []string `json:"providers"`
	// Model is the model's name; Aliases other names of it; Patterns
	// (path.Match globs, e.g. "gpt-4o-2024-*") dated or versioned names.
	Model    string   `json:"model"`
	Aliases  []string `json:"aliases,omitempty"`
	Patterns []string `json:"patterns,omitempty"`
	// Input is the price of a prompt (input) token, of an embedded token
	// too; CachedInput of a prompt token read from the provider's cache
	// (default: Input); CacheWrite of one written to it (default: Input);
	// Output of a completion (output) token; Reasoning of a reasoning
	// token (default: Output).
	Input       string `json:"input"`
	CachedInput string `json:"cached_input,omitempty"`
	CacheWrite  string `json:"cache_write,omitempty"`
	Output      string `json:"output,omitempty"`
	Reasoning   string `json:"reasoning,omitempty"`
	// BatchDiscount is the percent off for work a batch runs.
	BatchDiscount int `json:"batch_discount,omitempty"`
	// MaxOutput is the most output tokens the model writes in one reply
	// (its documented ceiling), which a budget reserves for a request that
	// sets no maximum of its own; 0 when the row does not say.
	MaxOutput int64 `json:"max_output,omitempty"`
	// Read is the date the price was read; Source where (a public page).
	Read   string `json:"read,omitempty"`
	Source string `json:"source,omitempty"`

	// rates are the prices in picodollars per token, by kind.
	rates [kinds]int64
}

// The kinds of token a row prices.
const (
	input = iota
	cachedInput
	cacheWrite
	output
	reasoning
	kinds
)

// MaxPrice bounds a price, in USD per 1M tokens; with MaxTokens it keeps
// every cost within an int64.
const MaxPrice = 10000

// MaxTokens bounds each count of a usage that is priced: a reply that
// reports more is priced as this many (its usage findings say why).
const MaxTokens = 100_000_000

// Usage is what a reply reports: prompt tokens (of which Cached were
// read from the provider's cache and CacheWrite written to it) and
// completion tokens (of which Reasoning were reasoning).
type Usage struct {
	Prompt, Cached, CacheWrite, Completion, Reasoning int64
}

// Cost is the price of u at the row's rates, in picodollars, less the
// batch discount for batch work.
func (r *Row) Cost(u Usage, batch bool) int64 {
	c := func(n int64) int64 { return min(max(n, 0), MaxTokens) }
	prompt, cached, written := c(u.Prompt), c(u.Cached), c(u.CacheWrite)
	completion, thought := c(u.Completion), c(u.Reasoning)
	cached, written = min(cached, prompt), min(written, prompt-min(cached, prompt))
	thought = min(thought, completion)
	cost := (prompt-cached-written)*r.rates[input] + cached*r.rates[cachedInput] + written*r.rates[cacheWrite] +
		(completion-thought)*r.rates[output] + thought*r.rates[reasoning]
	return r.discount(cost, batch)
}

// MaxCost is the most prompt input tokens and completion output tokens
// can cost at the row's rates, whichever kind of token each turns out to
// be (a prompt token at the dearest of input, cached input and cache
// write; a completion token at the dearer of output and reasoning), less
// the batch discount for batch work: what a budget reserves for a request
// before its usage is known.
func (r *Row) MaxCost(prompt, completion int64, batch bool) int64 {
	c := func(n int64) int64 { return min(max(n, 0), MaxTokens) }
	in := max(r.rates[input], r.rates[cachedInput], r.rates[cacheWrite])
	out := max(r.rates[output], r.rates[reasoning])
	return r.discount(c(prompt)*in+c(completion)*out, batch)
}

// discount is cost less the batch discount, for batch work.
func (r *Row) discount(cost int64, batch bool) int64 {
	if batch && r.BatchDiscount > 0 {
		cost = cost/100*int64(100-r.BatchDiscount) + cost%100*int64(100-r.BatchDiscount)/100
	}
	return cost
}

// picoPerToken reads a price in USD per 1M tokens as picodollars per
// token: "0.075" is 75000.
func picoPerToken(field, usd string) (int64, error) {
	micro, err := ParseMicroUSD(usd, MaxPrice)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", field, err)
	}
	return micro, nil
}

// ParseMicroUSD reads an amount in USD with at most six decimals, up to
// maxWhole dollars, as a whole number of microdollars: "0.075" is 75000.
func ParseMicroUSD(usd string, maxWhole int64) (int64, error) {
	whole, frac, _ := strings.Cut(usd, ".")
	if whole == "" || len(frac) > 6 || strings.Trim(whole+frac, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not an amount in USD with at most six decimals", usd)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	f, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	if err != nil || w > maxWhole || (w == maxWhole && f > 0) {
		return 0, fmt.Errorf("%q is above %d USD", usd, maxWhole)
	}
	return w*1_000_000 + f, nil
}

// resolve checks the row and reads its rates, defaults filled in.
func (r *Row) resolve() error {
	if r.Model == "" || len(r.Providers) == 0 {
		return fmt.Errorf("a price needs a model and its providers")
	}
	prices := [kinds]string{r.Input, r.CachedInput, r.CacheWrite, r.Output, r.Reasoning}
	defaults := [kinds]int{input, input, input, output, output}
	names := [kinds]string{"input", "cached_input", "cache_write", "output", "reasoning"}
	for i, p := range prices {
		if p == "" {
			p = prices[defaults[i]]
		}
		if p == "" {
			p = "0" // a row without output prices none (embeddings)
		}
		rate, err := picoPerToken(names[i], p)
		if err != nil {
			return fmt.Errorf("price of %s: %w", r.Model, err)
		}
		r.rates[i] = rate
	}
	if r.Input == "" {
		return fmt.Errorf("price of %s: input is required", r.Model)
	}
	if r.MaxOutput < 0 || r.MaxOutput > MaxTokens {
		return fmt.Errorf("price of %s: max_output %d is not between 0 and %d", r.Model, r.MaxOutput, MaxTokens)
	}
	if r.BatchDiscount < 0 || r.BatchDiscount > 100 {
		return fmt.Errorf("price of %s: batch_discount %d is not a percent", r.Model, r.BatchDiscount)
	}
	for _, p := range r.Patterns {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("price of %s: pattern %q: %w", r.Model, p, err)
		}
	}
	return nil
}

// Table finds the row of a provider's model: by name or alias, else by
// the longest matching pattern. An operator's row comes before the
// shipped row of the same name.
type Table struct {
	names    map[string]map[string]*Row // by provider, then name
	patterns []pattern
}

type pattern struct {
	provider, glob string
	row            *Row
}

// NewTable is the shipped table with the operator's rows put before it.
func NewTable(operator []Row) (*Table, error) {
	var doc struct {
		Prices []Row `json:"prices"`
	}
	if err := json.Unmarshal(shipped, &doc); err != nil {
		return nil, fmt.Errorf("the shipped price table: %w", err)
	}
	t := &Table{names: map[string]map[string]*Row{}}
	for _, rows := range [][]Row{operator, doc.Prices} {
		for i := range rows {
			r := rows[i]
			if err := r.resolve(); err != nil {
				return nil, err
			}
			for _, p := range r.Providers {
				if t.names[p] == nil {
					t.names[p] = map[string]*Row{}
				}
				for _, name := range append([]string{r.Model}, r.Aliases...) {
					if _, taken := t.names[p][name]; !taken {
						t.names[p][name] = &r
					}
				}
				for _, g := range r.Patterns {
					t.patterns = append(t.patterns, pattern{p, g, &r})
				}
			}
		}
	}
	// The longest pattern first; among equals, the operator's (stable).
	slices.SortStableFunc(t.patterns, func(a, b pattern) int { return len(b.glob) - len(a.glob) })
	return t, nil
}

// Lookup is the row pricing model on an upstream of kind provider; nil
// when none does (the model is unpriced).
func (t *Table) Lookup(provider, model string) *Row {
	if r := t.names[provider][model]; r != nil {
		return r
	}
	if r := t.names["*"][model]; r != nil {
		return r
	}
	for _, p := range t.patterns {
		if p.provider != provider && p.provider != "*" {
			continue
		}
		if ok, _ := path.Match(p.glob, model); ok {
			return p.row
		}
	}
	return nil
}

// USD writes picodollars as a decimal number of dollars, exactly: 1500000
// is "0.0000015".
func USD(pico int64) string {
	var buf [40]byte
	b := buf[:0]
	if pico < 0 {
		b = append(b, '-')
	}
	whole, frac := pico/picoPerUSD, pico%picoPerUSD
	if pico < 0 {
		whole, frac = -whole, -frac
	}
	b = strconv.AppendUint(b, uint64(whole), 10)
	if frac == 0 {
		return string(b)
	}
	var digits [12]byte
	for i := len(digits) - 1; i >= 0; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := len(digits)
	for digits[n-1] == '0' {
		n--
	}
	return string(append(append(b, '.'), digits[:n]...))
}

// picoPerUSD is a dollar in picodollars.
const picoPerUSD = 1_000_000_000_000
