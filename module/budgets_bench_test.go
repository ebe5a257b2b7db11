package modelgate

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelgate/modelgate/module/budget"
	"github.com/modelgate/modelgate/module/pricing"
	"github.com/modelgate/modelgate/module/ratelimit"
	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
)

// BenchmarkBudget is what a daily budget (in process) adds to a chat
// request of the harness on a priced model, its prompt already counted for
// the key's tokens per minute: the maximum cost, the reservation and its
// header, the settlement on the reply's cost.
func BenchmarkBudget(b *testing.B) {
	g := benchGateway(b, ratelimit.Limits{})
	p := &g.keys.keys[len(g.keys.keys)-1]
	p.budgetLimits = []budget.Limit{{USD: "1000000", Period: "day"}}
	table, err := pricing.NewTable(nil)
	if err != nil {
		b.Fatal(err)
	}
	g.prices = &priceBook{table: table, kinds: map[string]string{"provider": "openai"}}
	g.budgets = budgetRules{loc: time.UTC, defaultMaxOutput: budget.DefaultMaxOutput, store: budget.Process}
	if err := g.holdToBudgets(p); err != nil {
		b.Fatal(err)
	}
	route := &resolvedRoute{primaries: []target{{name: "provider"}}}
	op, _ := operationByID(upstreams.OpChatCompletionsCreate)
	body := benchBody(0)
	doc, v := schemas.ValidateRequest(op.ID, body)
	if v != nil {
		b.Fatal(v)
	}
	w := httptest.NewRecorder()
	r := benchRequest(nil)
	b.ReportAllocs()
	for b.Loop() {
		call := &upstreams.Call{Operation: op.ID, Model: "gpt-4o-mini", Body: body, Doc: doc, Request: r}
		req := &request{op: op, http: r, key: p, call: call, route: route, prompt: 180, promptCounted: true}
		ex := newExchange(w, 0)
		if err := g.reserveBudget(ex, req); err != nil || req.reservation == nil {
			b.Fatalf("%v %v", err, req.reservation)
		}
		req.cost = exchangeCost{priced: true, pico: 123_000_000}
		g.settleBudget(req, ex)
	}
}
