package budget

import (
	"net/http"

	"github.com/modelgate/modelgate/module/pricing"
)

// The headers of a budget: its limit and what is left in USD, when it
// resets (RFC 3339, in the budgets' time zone), whose it is (key or owner)
// and its period. A refusal carries them all, of the budget that refused;
// a reply served carries what is left of the budget with the least left,
// after its reservation (each header costs every request some 6k
// instructions, written and parsed).
const (
	HeaderLimit     = "X-Modelgate-Budget-Limit-Usd"
	HeaderRemaining = "X-Modelgate-Budget-Remaining-Usd"
	HeaderReset     = "X-Modelgate-Budget-Reset"
	HeaderScope     = "X-Modelgate-Budget-Scope"
	HeaderPeriod    = "X-Modelgate-Budget-Period"
)

// SetHeaders writes the refusal's budget headers.
func (r *Refusal) SetHeaders(h http.Header) {
	s := r.State
	// The names are canonical; the values share one backing array.
	values := []string{s.limitUSD, pricing.USD(s.Remaining), s.reset, s.Scope, string(s.Period)}
	for i, name := range [...]string{HeaderLimit, HeaderRemaining, HeaderReset, HeaderScope, HeaderPeriod} {
		h[name] = values[i : i+1 : i+1]
	}
}

// SetHeaders writes what is left of the budget with the least left.
func (r *Reservation) SetHeaders(h http.Header) {
	h[HeaderRemaining] = []string{pricing.USD(r.Remaining)}
}
