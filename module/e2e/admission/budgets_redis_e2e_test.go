package admission

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/internal/testredis"
)

// budgetChat asks the reference engine for 5 completion tokens, which it
// always writes: its cost is its maximum, what the budget reserves.
const budgetChat = `{"model":"budget-model","messages":[{"role":"user","content":"Tell me about rivers and the sea"}],"max_completion_tokens":5}`

// picoOf reads a cost trailer or budget header (USD) as picodollars.
func picoOf(t *testing.T, usd string) int64 {
	t.Helper()
	whole, frac, _ := strings.Cut(usd, ".")
	w, err1 := strconv.ParseInt(whole, 10, 64)
	f, err2 := strconv.ParseInt((frac + "000000000000")[:12], 10, 64)
	if err1 != nil || err2 != nil || len(frac) > 12 {
		t.Fatalf("%q is not an amount in USD", usd)
	}
	return w*1_000_000_000_000 + f
}

// TestBudgetSharedByTwoGatewaysOnRedis: two gateways on one Redis hold a
// key to its daily budget of $0.001 together: of 200 concurrent requests
// split across both, exactly as many as the budget pays for are served
// (each reserves its maximum cost, which is what it costs: no overshoot),
// the rest answered 429 insufficient_quota with x-should-retry: false and
// the budget headers; Redis holds the day's spend under the owner's hash
// slot and the key's digest, exactly the sum of the costs served; a
// reload keeps the key stopped.
func TestBudgetSharedByTwoGatewaysOnRedis(t *testing.T) {
	const key = "sk-budget-shared-000001"
	c := testredis.Client(t)
	addr := testredis.Addr(t)
	prefix := testredis.Prefix(t)
	cfg, gw := gatewaytest.TwoGatewaysConfig(t, prefix, fmt.Sprintf(`key %s {
			name spender
			owner team
			budget 0.001 day
		}
		route chat.completions.create to reference
		cost_header
		%s`, key, gatewaytest.BudgetPrice), [2]string{addr, addr}, [2]string{"closed", "closed"})
	// 200 requests at once wait for the client's pooled connections: on a
	// loaded machine (or under -race) more than the helper's 2s.
	cfg = strings.ReplaceAll(cfg, "timeout 2s", "timeout 20s")
	testgateway.Load(t, cfg)

	var (
		status   = map[int]int{}
		costs    = map[int64]int{}
		refusals []http.Header
	)
	for _, r := range gatewaytest.PostAll(t, gw[:], key, budgetChat, 200) {
		status[r.Resp.StatusCode]++
		switch r.Resp.StatusCode {
		case 200:
			costs[picoOf(t, r.Resp.Trailer.Get("X-Modelgate-Cost-Usd"))]++
		case 429:
			if gjson.Get(r.Body, "error.type").String() != "insufficient_quota" || gjson.Get(r.Body, "error.code").String() != "insufficient_quota" {
				t.Errorf("refusal %s", r.Body)
			}
			refusals = append(refusals, r.Resp.Header)
		default:
			t.Errorf("%d %s", r.Resp.StatusCode, r.Body)
		}
	}
	if len(costs) != 1 {
		t.Fatalf("costs %v: every request should cost the same", costs)
	}
	var cost int64
	for c := range costs {
		cost = c
	}
	const budget = 1_000_000_000 // $0.001 in picodollars
	t.Logf("statuses %v, each request %d picodollars", status, cost)
	served := status[200]
	if served != int(budget/cost) || status[429] != 200-served {
		t.Fatalf("statuses %v for requests of %d picodollars: want %d served within the budget", status, cost, budget/cost)
	}
	tomorrow := time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour).Format(time.RFC3339)
	for _, h := range refusals {
		if h.Get("X-Should-Retry") != "false" || h.Get("X-Modelgate-Budget-Limit-Usd") != "0.001" || h.Get("X-Modelgate-Budget-Scope") != "key" ||
			h.Get("X-Modelgate-Budget-Period") != "day" || h.Get("X-Modelgate-Budget-Reset") != tomorrow ||
			picoOf(t, h.Get("X-Modelgate-Budget-Remaining-Usd")) >= cost {
			t.Fatalf("refusal headers %v", h)
		}
	}
	// The spend is in Redis, named by the owner's digest and the key's,
	// exactly what was served.
	owner := sha256.Sum256([]byte("team"))
	name := fmt.Sprintf("%sbudget:{%s}:key:%s:day:%s", prefix, hex.EncodeToString(owner[:8]), gatewaytest.Sha256Hex(key), time.Now().UTC().Format(time.DateOnly))
	spent, err := c.Get(context.Background(), name).Int64()
	if err != nil || spent != int64(served)*cost {
		t.Fatalf("redis %s = %d (%v), want %d", name, spent, err, int64(served)*cost)
	}
	if ttl := c.TTL(context.Background(), name).Val(); ttl < 7*24*time.Hour || ttl > 8*24*time.Hour+time.Minute {
		t.Errorf("the day's spend is kept %s", ttl)
	}
	// A reload (a restart would read the same Redis) keeps the key stopped.
	testgateway.Reload(t, cfg)
	if resp, body := gatewaytest.Post(t, gw[1], key, budgetChat); resp == nil || resp.StatusCode != 429 {
		t.Fatalf("after the reload: %v %s", resp, body)
	}
}

// TestBudgetStoreUnreachable: with the rate limit store's Redis down, a
// key under a budget is served unreserved by a gateway whose failure_mode
// is open and refused 503 budget_store_unavailable by one whose mode is
// closed.
func TestBudgetStoreUnreachable(t *testing.T) {
	const key = "sk-budget-unreachable-01"
	dead := fmt.Sprintf("127.0.0.1:%d", testgateway.FreePort(t))
	_, gw := gatewaytest.TwoGateways(t, "modelgate:", fmt.Sprintf(`key %s {
			budget 1 day
		}
		route chat.completions.create to reference
		%s`, key, gatewaytest.BudgetPrice), [2]string{dead, dead}, [2]string{"open", "closed"})
	if resp, body := gatewaytest.Post(t, gw[0], key, budgetChat); resp.StatusCode != 200 || resp.Header.Get("X-Modelgate-Budget-Remaining-Usd") != "" {
		t.Fatalf("open: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	resp, body := gatewaytest.Post(t, gw[1], key, budgetChat)
	if resp.StatusCode != 503 || gjson.Get(body, "error.code").String() != "budget_store_unavailable" || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("closed: %d %v %s", resp.StatusCode, resp.Header, body)
	}
}
