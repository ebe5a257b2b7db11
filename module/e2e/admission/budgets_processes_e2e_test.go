package admission

import (
	"fmt"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/internal/testredis"
)

// TestBudgetAcrossTwoProcessesOnRedis: two gateway processes (each its
// own Caddy, nothing shared but Redis) hold a key to its daily budget of
// $0.001 together: of 200 concurrent requests split across both, exactly
// as many as the budget pays for are served, every other one refused 429
// insufficient_quota.
func TestBudgetAcrossTwoProcessesOnRedis(t *testing.T) {
	const key = "sk-budget-processes-0001"
	site := fmt.Sprintf(`rate_limit_store redis %s {
			prefix %s
			timeout 20s
			failure_mode closed
		}
		key %s {
			name spender
			owner team
			budget 0.001 day
		}
		route chat.completions.create to reference
		cost_header
		%s`, testredis.Addr(t), testredis.Prefix(t), key, gatewaytest.BudgetPrice)
	var bases []string
	for range 2 {
		bases = append(bases, gatewaytest.StartChildWith(t, "", site, testgateway.FreePort(t)).Base)
	}
	status, costs := map[int]int{}, map[int64]int{}
	for _, r := range gatewaytest.PostAll(t, bases, key, budgetChat, 200) {
		status[r.Resp.StatusCode]++
		if r.Resp.StatusCode == 200 {
			costs[picoOf(t, r.Resp.Trailer.Get("X-Modelgate-Cost-Usd"))]++
		}
	}
	if len(costs) != 1 {
		t.Fatalf("statuses %v, costs %v: every request should cost the same", status, costs)
	}
	const budget = 1_000_000_000 // $0.001 in picodollars
	for cost := range costs {
		if served := status[200]; served != int(budget/cost) || status[429] != 200-served {
			t.Fatalf("statuses %v for requests of %d picodollars: want %d served within the budget", status, cost, budget/cost)
		}
	}
}
