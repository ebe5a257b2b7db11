package budget

import (
	"net/http"
	"time"

	"github.com/modelgate/modelgate/module/pricing"
)

// The headers a request under a budget is answered with, describing the
// budget with the least left (the one that refused a 429): its limit and
// what is left in USD, when it resets (RFC 3339, in the budgets' time
// zone), whose it is (key or owner) and its period.
const (
	HeaderLimit     = "X-Modelgate-Budget-Limit-Usd"
	HeaderRemaining = "X-Modelgate-Budget-Remaining-Usd"
	HeaderReset     = "X-Modelgate-Budget-Reset"
	HeaderScope     = "X-Modelgate-Budget-Scope"
	HeaderPeriod    = "X-Modelgate-Budget-Period"
)

// SetHeaders writes the budget headers.
func (s State) SetHeaders(h http.Header) {
	// The names are canonical; the values share one backing array.
	values := []string{pricing.USD(s.Limit), pricing.USD(s.Remaining), s.Reset.Format(time.RFC3339), s.Scope, string(s.Period)}
	for i, name := range [...]string{HeaderLimit, HeaderRemaining, HeaderReset, HeaderScope, HeaderPeriod} {
		h[name] = values[i : i+1 : i+1]
	}
}
