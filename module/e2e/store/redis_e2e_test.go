package store

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/internal/testredis"
)

const smallChat = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":5}`

// TestRedisLimitsSharedByTwoGateways: two gateways on one Redis hold one
// key to one limit: a burst split across both is refused exactly past
// it, the state lives in Redis under the key's digest, a reload keeps it,
// and tokens settled on one gateway are seen by the other.
func TestRedisLimitsSharedByTwoGateways(t *testing.T) {
	const tokenKey = "sk-redis-tokens-0000007"
	c := testredis.Client(t)
	addr := testredis.Addr(t)
	prefix := testredis.Prefix(t)
	cfg, gw := gatewaytest.TwoGateways(t, prefix, fmt.Sprintf(`key %s {
			rpm 4
		}
		key %s {
			tpm 1200
		}
		route chat.completions.create to reference`, gatewaytest.ClientKey, tokenKey), [2]string{addr, addr}, [2]string{"closed", "closed"})

	// A burst of 10 over both; one request comes back every 15s.
	status := map[int]int{}
	for _, r := range gatewaytest.PostAll(t, gw[:], gatewaytest.ClientKey, smallChat, 10) {
		resp, body := r.Resp, r.Body
		status[resp.StatusCode]++
		if resp.StatusCode == 429 {
			ra, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			if ra < 1 || ra > 15 || resp.Header.Get("X-Ratelimit-Limit-Requests") != "4" || resp.Header.Get("X-Ratelimit-Remaining-Requests") != "0" ||
				!strings.Contains(body, `"code":"rate_limit_exceeded"`) || !strings.Contains(body, `"type":"requests"`) {
				t.Errorf("refusal: %v %s", resp.Header, body)
			}
		}
	}
	if status[200] != 4 || status[429] != 6 {
		t.Fatalf("statuses %v, want 4 admitted and 6 refused", status)
	}
	// The state is in Redis, named by the key's digest and never the key.
	keys, _ := c.Keys(context.Background(), prefix+"*").Result()
	want := prefix + "{" + gatewaytest.Sha256Hex(gatewaytest.ClientKey) + "}:requests"
	if len(keys) != 1 || keys[0] != want {
		t.Fatalf("redis keys %v, want [%s]", keys, want)
	}
	// A reload keeps the limit in force.
	testgateway.Reload(t, cfg)
	if resp, body := gatewaytest.Post(t, gw[1], gatewaytest.ClientKey, smallChat); resp == nil || resp.StatusCode != 429 {
		t.Fatalf("after the reload: %v %s", resp, body)
	}
	// Only Redis holds the state: emptied, the allowance is whole again.
	c.Del(context.Background(), want)
	if resp, _ := gatewaytest.Post(t, gw[0], gatewaytest.ClientKey, smallChat); resp.StatusCode != 200 || resp.Header.Get("X-Ratelimit-Remaining-Requests") != "3" {
		t.Fatalf("after emptying redis: %d %v", resp.StatusCode, resp.Header)
	}

	// Tokens: gateway 0 admits an estimate over 1000 and settles what the
	// reply used; gateway 1 sees the refund.
	resp, body := gatewaytest.Post(t, gw[0], tokenKey, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"count tokens for me"}],"max_completion_tokens":1000}`)
	if resp.StatusCode != 200 {
		t.Fatalf("token request: %d %s", resp.StatusCode, body)
	}
	if left, _ := strconv.Atoi(resp.Header.Get("X-Ratelimit-Remaining-Tokens")); left > 200 {
		t.Fatalf("admission charged only %d of the estimate", 1200-left)
	}
	used, _ := strconv.Atoi(regexp.MustCompile(`"total_tokens":(\d+)`).FindStringSubmatch(body)[1])
	resp, _ = gatewaytest.Post(t, gw[1], tokenKey, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}],"max_completion_tokens":1}`)
	left, _ := strconv.Atoi(resp.Header.Get("X-Ratelimit-Remaining-Tokens"))
	if resp.StatusCode != 200 || used == 0 || left < 1200-used-50 {
		t.Fatalf("after settling %d tokens on the other gateway: %d, %d tokens left", used, resp.StatusCode, left)
	}
}

// TestRedisConcurrencySharedByTwoGateways: a request in flight on one
// gateway takes the key's only slot on both.
func TestRedisConcurrencySharedByTwoGateways(t *testing.T) {
	addr := testredis.Addr(t)
	started, unblock := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	slow := gatewaytest.NewCounting(t, func(n int64, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			started <- struct{}{}
			<-unblock
		}
		gatewaytest.CompletionFrom("slow")(n, w, r)
	})
	defer once.Do(func() { close(unblock) })
	_, gw := gatewaytest.TwoGateways(t, testredis.Prefix(t), fmt.Sprintf(`key %s {
			max_concurrent 1
		}
		upstream slow {
			base_url %s/v1
		}
		route chat.completions.create to slow`, gatewaytest.ClientKey, slow.URL), [2]string{addr, addr}, [2]string{"closed", "closed"})

	done := make(chan int)
	go func() {
		code := 0
		if resp, _ := gatewaytest.Post(t, gw[0], gatewaytest.ClientKey, smallChat); resp != nil {
			code = resp.StatusCode
		}
		done <- code
	}()
	<-started
	resp, body := gatewaytest.Post(t, gw[1], gatewaytest.ClientKey, smallChat)
	if resp.StatusCode != 429 || !strings.Contains(body, `"type":"concurrency"`) || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("second in flight on the other gateway: %d %s", resp.StatusCode, body)
	}
	once.Do(func() { close(unblock) })
	if code := <-done; code != 200 {
		t.Fatalf("first request: %d", code)
	}
	if resp, _ := gatewaytest.Post(t, gw[1], gatewaytest.ClientKey, smallChat); resp.StatusCode != 200 {
		t.Fatalf("after the first ended: %d", resp.StatusCode)
	}
}

// cuttableProxy forwards TCP to Redis until cut, and again once restored,
// on the same address: Redis going away and coming back, as gateways see it.
type cuttableProxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
}

func newCuttableProxy(t *testing.T, target string) *cuttableProxy {
	p := &cuttableProxy{target: target}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.cut)
	return p
}

func (p *cuttableProxy) serve(ln net.Listener) {
	p.ln = ln
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", p.target)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
}

func (p *cuttableProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *cuttableProxy) restore(t *testing.T) {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.serve(ln)
}

// TestRedisUnreachable: with Redis gone, a gateway failing open admits
// requests unchecked (no rate-limit headers; a metric counts it) and one
// failing closed answers 503; with Redis back, the limits that were in
// force are again.
func TestRedisUnreachable(t *testing.T) {
	proxy := newCuttableProxy(t, testredis.Addr(t))
	_, gw := gatewaytest.TwoGateways(t, testredis.Prefix(t), fmt.Sprintf(`key %s {
			rpm 2
		}
		route chat.completions.create to reference`, gatewaytest.ClientKey), [2]string{proxy.addr, proxy.addr}, [2]string{"open", "closed"})
	open, closed := gw[0], gw[1]
	if resp, _ := gatewaytest.Post(t, open, gatewaytest.ClientKey, smallChat); resp.StatusCode != 200 || resp.Header.Get("X-Ratelimit-Remaining-Requests") != "1" {
		t.Fatalf("with redis: %d %v", resp.StatusCode, resp.Header)
	}

	proxy.cut()
	for range 3 {
		if resp, _ := gatewaytest.Post(t, open, gatewaytest.ClientKey, smallChat); resp.StatusCode != 200 || resp.Header.Get("X-Ratelimit-Limit-Requests") != "" {
			t.Fatalf("failing open: %d %v", resp.StatusCode, resp.Header)
		}
	}
	resp, body := gatewaytest.Post(t, closed, gatewaytest.ClientKey, smallChat)
	if resp.StatusCode != 503 || !strings.Contains(body, `"code":"rate_limit_store_unavailable"`) || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("failing closed: %d %s", resp.StatusCode, body)
	}
	metrics, _ := http.Get(open + "/metrics")
	scrape, _ := io.ReadAll(metrics.Body)
	metrics.Body.Close()
	m := regexp.MustCompile(`caddy_modelgate_rate_limit_store_failures_total\{step="admit"\} (\d+)`).FindSubmatch(scrape)
	if m == nil {
		t.Fatal("no failures metric")
	}
	if n, _ := strconv.Atoi(string(m[1])); n < 4 {
		t.Fatalf("failures metric: %s", m[0])
	}

	// Back: what was charged before the outage still counts, what was
	// admitted unchecked does not. The client reconnects in the background.
	proxy.restore(t)
	var last *http.Response
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if last, _ = gatewaytest.Post(t, closed, gatewaytest.ClientKey, smallChat); last.StatusCode != 503 || time.Now().After(deadline) {
			break
		}
	}
	if last.StatusCode != 200 || last.Header.Get("X-Ratelimit-Remaining-Requests") != "0" {
		t.Fatalf("redis back: %d %v", last.StatusCode, last.Header)
	}
	if resp, _ := gatewaytest.Post(t, open, gatewaytest.ClientKey, smallChat); resp.StatusCode != 429 {
		t.Fatalf("over the limit with redis back: %d", resp.StatusCode)
	}
}
