// Package budget holds API keys and their owners to budgets in USD per
// calendar day, week or month. A request reserves its maximum possible
// cost on admission, against every budget that applies to it at once (or
// none), and settles on its actual cost once its usage is known, the
// difference refunded. Spend is kept in integer picodollars (as
// module/pricing prices work), in this process or in Redis, where every
// instance using the same Redis shares it exactly.
package budget

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/modelgate/modelgate/module/pricing"
)

// Limit is one budget: at most USD (a decimal amount, up to six
// decimals) spent per Period (day, week or month).
type Limit struct {
	USD    string `json:"usd"`
	Period string `json:"period"`
}

// MaxUSD bounds a budget: with it every sum of spend fits an int64 of
// picodollars.
const MaxUSD = 1_000_000

// maxPico bounds what one request reserves or settles, in picodollars: a
// request that may cost more than any budget is refused, and one that did
// is counted as MaxUSD.
const maxPico = MaxUSD * picoPerUSD

const picoPerUSD = 1_000_000_000_000

// Settings are the budgets' gateway-wide settings.
type Settings struct {
	// TimeZone is the IANA time zone the calendar periods start at
	// midnight in. Default: UTC.
	TimeZone string `json:"time_zone,omitempty"`
	// Unpriced says what happens to work under a budget that the price
	// table does not price (a model without a row, an operation priced by
	// anything but tokens): `refuse` it (400 model_unpriced) or `allow`
	// it, uncounted. Default: refuse.
	Unpriced string `json:"unpriced,omitempty"`
	// DefaultMaxOutput is the output a request that sets no maximum is
	// reserved for when its model's price row names no max_output.
	// Default: 32768.
	DefaultMaxOutput int64 `json:"default_max_output,omitempty"`
}

// DefaultMaxOutput is Settings.DefaultMaxOutput's default.
const DefaultMaxOutput = 32768

// Resolve checks the settings and fills in the defaults: the time zone,
// whether unpriced work is allowed, the default output ceiling.
func (s *Settings) Resolve() (loc *time.Location, allowUnpriced bool, maxOutput int64, err error) {
	var c Settings
	if s != nil {
		c = *s
	}
	loc = time.UTC
	if c.TimeZone != "" {
		if loc, err = time.LoadLocation(c.TimeZone); err != nil {
			return nil, false, 0, fmt.Errorf("budgets: time_zone: %w", err)
		}
	}
	switch c.Unpriced {
	case "", "refuse":
	case "allow":
		allowUnpriced = true
	default:
		return nil, false, 0, fmt.Errorf("budgets: unpriced must be refuse or allow, got %q", c.Unpriced)
	}
	maxOutput = c.DefaultMaxOutput
	if maxOutput == 0 {
		maxOutput = DefaultMaxOutput
	}
	if maxOutput < 0 || maxOutput > pricing.MaxTokens {
		return nil, false, 0, fmt.Errorf("budgets: default_max_output %d is not between 1 and %d", maxOutput, pricing.MaxTokens)
	}
	return loc, allowUnpriced, maxOutput, nil
}

// Check validates limits: each an amount above zero and at most MaxUSD
// for a period, no period twice.
func Check(limits []Limit) error {
	_, err := parse(limits)
	return err
}

type parsed struct {
	pico   int64
	period Period
}

func parse(limits []Limit) ([]parsed, error) {
	out := make([]parsed, 0, len(limits))
	seen := map[Period]bool{}
	for _, l := range limits {
		p, err := parsePeriod(l.Period)
		if err != nil {
			return nil, fmt.Errorf("budget: %w", err)
		}
		if seen[p] {
			return nil, fmt.Errorf("budget: two budgets per %s; give one", p)
		}
		seen[p] = true
		micro, err := pricing.ParseMicroUSD(l.USD, MaxUSD)
		if err != nil {
			return nil, fmt.Errorf("budget per %s: %w", p, err)
		}
		if micro == 0 {
			return nil, fmt.Errorf("budget per %s: %q is not above zero", p, l.USD)
		}
		out = append(out, parsed{pico: micro * 1_000_000, period: p})
	}
	return out, nil
}

// Holder is whom an account's budgets belong to: a key (by the digest
// that names its state, never the key, and its name for messages) and its
// owner.
type Holder struct {
	KeyID, KeyName, Owner string
}

// Account is the budgets one key's requests are held to: the key's own
// and its owner's. Its spend is kept under the owner's name, so that one
// Redis call (in one hash slot of a Redis Cluster) reserves against all
// of them.
type Account struct {
	store    Store
	loc      *time.Location
	counters []*counter
}

// counter is one budget of an account and the period it counts now.
type counter struct {
	scope, name string // "key" or "owner"; the key's name or the owner
	limit       int64
	limitUSD    string // limit, for the headers
	period      Period
	base        string // its state's name, without the period's
	window      atomic.Pointer[window]
}

// window is a counter's current period.
type window struct {
	key        string // the state's name, period included
	start, end time.Time
	expireAt   time.Time // when the state may go: a week after end
	reset      string    // end, for the headers
}

// stateKeep is how long a period's spend is kept after it ends, for a
// request that reserved in it and settles late.
const stateKeep = 7 * 24 * time.Hour

// NewAccount is the account of a key held to its own limits and its
// owner's, in store; nil when neither has any.
func NewAccount(store Store, loc *time.Location, h Holder, key, owner []Limit) (*Account, error) {
	if len(key) == 0 && len(owner) == 0 {
		return nil, nil
	}
	keyLimits, err := parse(key)
	if err != nil {
		return nil, err
	}
	ownerLimits, err := parse(owner)
	if err != nil {
		return nil, fmt.Errorf("owner %s: %w", h.Owner, err)
	}
	sum := sha256.Sum256([]byte(h.Owner))
	group := "budget:{" + hex.EncodeToString(sum[:8]) + "}:"
	a := &Account{store: store, loc: loc}
	for _, l := range keyLimits {
		a.counters = append(a.counters, &counter{scope: "key", name: h.KeyName, limit: l.pico, limitUSD: pricing.USD(l.pico), period: l.period,
			base: group + "key:" + h.KeyID + ":" + string(l.period) + ":"})
	}
	for _, l := range ownerLimits {
		a.counters = append(a.counters, &counter{scope: "owner", name: h.Owner, limit: l.pico, limitUSD: pricing.USD(l.pico), period: l.period,
			base: group + "owner:" + string(l.period) + ":"})
	}
	return a, nil
}

// MaxLimit is the largest of the account's budgets, in picodollars: a
// request that may cost more is refused whatever else it holds.
func (a *Account) MaxLimit() int64 {
	var m int64
	for _, c := range a.counters {
		m = max(m, c.limit)
	}
	return m
}

// current is the counter's window at now, kept until it ends.
func (c *counter) current(loc *time.Location, now time.Time) *window {
	if w := c.window.Load(); w != nil && now.Before(w.end) && !now.Before(w.start) {
		return w
	}
	name, start, end := c.period.Window(loc, now)
	w := &window{key: c.base + name, start: start, end: end, expireAt: end.Add(stateKeep), reset: end.In(loc).Format(time.RFC3339)}
	c.window.Store(w)
	return w
}

// Store keeps spend: in this process (Process) or in Redis (NewRedis).
type Store interface {
	// reserve adds cost to every counter unless that takes one past its
	// limit: then it adds nothing and says which (its index; -1 when all
	// took it). It sets spent to what each had before (up to the one
	// that refused).
	reserve(ctx context.Context, keys []string, limits []int64, expire []time.Time, cost int64, spent []int64) (refused int, err error)
	// settle adds delta (negative: a refund) to every counter, never
	// taking one below zero.
	settle(ctx context.Context, keys []string, expire []time.Time, delta int64) error
}

// Reserve reserves cost (picodollars) at now against every budget of the
// account, or refuses without reserving anything. An error means the
// store could not be asked.
func (a *Account) Reserve(ctx context.Context, cost int64, now time.Time) (*Reservation, *Refusal, error) {
	cost = min(max(cost, 0), maxPico)
	n := len(a.counters)
	// One allocation: the reservation holds what the store is asked.
	r := &Reservation{store: a.store, cost: cost, n: n}
	var wins [maxCounters]*window
	for i, c := range a.counters {
		wins[i] = c.current(a.loc, now)
		r.keys[i], r.expire[i], r.limits[i] = wins[i].key, wins[i].expireAt, c.limit
	}
	refused, err := a.store.reserve(ctx, r.keys[:n], r.limits[:n], r.expire[:n], cost, r.spent[:n])
	if err != nil {
		return nil, nil, fmt.Errorf("budget store: reserving: %w", err)
	}
	state := func(i int, spent int64) State {
		c, w := a.counters[i], wins[i]
		return State{Scope: c.scope, Name: c.name, Period: c.period, Limit: c.limit, Remaining: max(c.limit-spent, 0), Reset: w.end.In(a.loc),
			limitUSD: c.limitUSD, reset: w.reset}
	}
	if refused >= 0 {
		return nil, &Refusal{State: state(refused, r.spent[refused]), Cost: cost}, nil
	}
	// The headers describe the budget with the least left.
	for i := range n {
		if s := state(i, r.spent[i]+cost); i == 0 || s.Remaining < r.State.Remaining {
			r.State = s
		}
	}
	return r, nil, nil
}

// maxCounters bounds an account's budgets: one per period (parse refuses
// two) for the key and for its owner.
const maxCounters = 6

// Reservation is an admitted request's reservation.
type Reservation struct {
	State
	store   Store
	n       int
	keys    [maxCounters]string
	expire  [maxCounters]time.Time
	limits  [maxCounters]int64
	spent   [maxCounters]int64
	cost    int64
	settled atomic.Bool
}

// Cost is what was reserved, in picodollars.
func (r *Reservation) Cost() int64 { return r.cost }

// Settle charges actual (picodollars) instead of the reservation, in the
// period it was reserved in: the difference is refunded, or charged when
// the work cost more than its maximum. Only the first call counts.
func (r *Reservation) Settle(ctx context.Context, actual int64) error {
	actual = min(max(actual, 0), maxPico)
	if r.settled.Swap(true) || actual == r.cost {
		return nil
	}
	if err := r.store.settle(ctx, r.keys[:r.n], r.expire[:r.n], actual-r.cost); err != nil {
		return fmt.Errorf("budget store: settling: %w", err)
	}
	return nil
}

// Refusal is a request its budget cannot take.
type Refusal struct {
	State
	// Cost is the most the request could cost, in picodollars.
	Cost int64
}

// Message is the refusal's message, naming the budget, what is left of
// it, what the request may cost and when the budget resets.
func (r *Refusal) Message() string {
	what := "The API key " + fmt.Sprintf("%q", r.Name)
	if r.Scope == "owner" {
		what = "The owner " + fmt.Sprintf("%q", r.Name) + " of this API key"
	}
	if r.Cost > r.Limit {
		return fmt.Sprintf("%s has a budget of $%s per %s, and this request may cost up to $%s: lower its maximum output (max_tokens, max_completion_tokens or max_output_tokens) or its input.",
			what, pricing.USD(r.Limit), r.Period, pricing.USD(r.Cost))
	}
	return fmt.Sprintf("%s has used its budget of $%s per %s: $%s is left, and this request may cost up to $%s. The budget resets at %s.",
		what, pricing.USD(r.Limit), r.Period, pricing.USD(r.Remaining), pricing.USD(r.Cost), r.Reset.Format(time.RFC3339))
}

// State is a budget as a request found it: whose, its limit, what is left
// (after the request's reservation, when admitted) and when it resets.
type State struct {
	Scope, Name string
	Period      Period
	Limit       int64
	Remaining   int64
	Reset       time.Time
	// limitUSD and reset are Limit and Reset as the headers write them.
	limitUSD, reset string
}
