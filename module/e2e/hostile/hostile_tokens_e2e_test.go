package hostile

import (
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestTokenCountsCannotWrap: max_tokens and max_completion_tokens above
// 2^31-1 are a 400 naming the field (the largest allowed one is admitted
// and charged, so a tpm 2000 key refuses it), and no count a client
// writes makes the estimate wrap and refill the key: after every attack
// the key has no more tokens left than an honest request left it.
func TestTokenCountsCannotWrap(t *testing.T) {
	port := testgateway.FreePort(t)
	testgateway.Load(t, gatewaytest.LimitedGateway(port, "key "+gatewaytest.ClientKey+" {\n tpm 2000\n }"))
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/chat/completions", port)
	body := func(extra string) string {
		return `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]` + extra + `}`
	}
	// What the key has left is read from a probe (the same small request
	// each time, so each costs the same) made after an honest request has
	// been settled: the header shows the bucket after the probe's own
	// reservation, so a settlement still to come can only lower it.
	probe := func() (int, int) {
		resp, _ := gatewaytest.RawRequest(t, "POST", url, body(`,"max_tokens":1`), gatewaytest.ChatHeaders)
		left, _ := strconv.Atoi(resp.Header.Get("X-Ratelimit-Remaining-Tokens"))
		return resp.StatusCode, left
	}
	start := time.Now()
	if resp, _ := gatewaytest.RawRequest(t, "POST", url, body(`,"max_tokens":40`), gatewaytest.ChatHeaders); resp.StatusCode != 200 {
		t.Fatalf("honest request: %d", resp.StatusCode)
	}
	probe()
	status, left := probe()
	if status != 200 || left <= 0 || left >= 2000 {
		t.Fatalf("probe: %d, %d tokens left", status, left)
	}
	for _, c := range []struct{ extra, param string }{
		{`,"max_tokens":9223372036854775807`, "max_tokens"},
		{`,"n":2,"max_tokens":4611686018427387904`, "max_tokens"},
		{`,"max_completion_tokens":9223372036854775807`, "max_completion_tokens"},
		{`,"max_tokens":2147483648`, "max_tokens"},
		{`,"max_completion_tokens":2147483648`, "max_completion_tokens"},
		{`,"max_tokens":1e300`, "max_tokens"},
	} {
		resp, env := gatewaytest.RawRequest(t, "POST", url, body(c.extra), gatewaytest.ChatHeaders)
		if resp.StatusCode != 400 || env.Error.Param == nil || *env.Error.Param != c.param || env.Error.Type != "invalid_request_error" {
			t.Fatalf("%s: %d %+v", c.extra, resp.StatusCode, env.Error)
		}
	}
	// The largest allowed value is valid, and charged: more than the key
	// can ever have.
	for _, extra := range []string{`,"max_tokens":2147483647`, `,"n":128,"max_completion_tokens":2147483647`} {
		resp, env := gatewaytest.RawRequest(t, "POST", url, body(extra), gatewaytest.ChatHeaders)
		if resp.StatusCode != 429 || env.Error.Type != "tokens" {
			t.Fatalf("%s: %d %+v", extra, resp.StatusCode, env.Error)
		}
	}
	status, after := probe()
	refill := int(time.Since(start).Seconds()*2000/60) + 1
	if status != 200 || after > left+refill {
		t.Fatalf("after the attacks: %d, %d tokens left; before them the same probe left %d (+%d refill)", status, after, left, refill)
	}
}

// TestAbsurdUpstreamUsageIsClamped: a provider reporting negative or huge
// usage neither refunds more than was reserved nor locks the key: the
// remaining-tokens header is never negative, and the debt a reply leaves
// is at most one minute's tokens.
func TestAbsurdUpstreamUsageIsClamped(t *testing.T) {
	var total atomic.Int64
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini",
			"choices":[{"index":0,"message":{"role":"assistant","content":"ok","refusal":null},"finish_reason":"stop","logprobs":null}],
			"usage":{"prompt_tokens":%[1]d,"completion_tokens":0,"total_tokens":%[1]d}}`, total.Load())
	})
	port := testgateway.FreePort(t)
	testgateway.Load(t, fmt.Sprintf(`%shttp://127.0.0.1:%d {
	modelgate {
		key %s {
			tpm 2000
		}
		upstream provider {
			base_url %s/v1
			api_key %s
		}
		route * to provider
	}
}
`, testgateway.GlobalOptions, port, gatewaytest.ClientKey, provider.URL, gatewaytest.UpstreamKey))
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/chat/completions", port)
	body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"max_tokens":500}`
	// A reload closes the previous server's connections: none is reused.
	closing := map[string]string{"Connection": "close"}
	for k, v := range gatewaytest.ChatHeaders {
		closing[k] = v
	}
	start := time.Now()
	// Negative usage: the estimate (about 508) stays charged, nothing is
	// refunded beyond it.
	total.Store(-1_000_000)
	resp, _ := gatewaytest.RawRequest(t, "POST", url, body, closing)
	if resp.StatusCode != 200 {
		t.Fatalf("negative usage: %d", resp.StatusCode)
	}
	resp, _ = gatewaytest.RawRequest(t, "POST", url, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"max_tokens":1}`, closing)
	left, _ := strconv.Atoi(resp.Header.Get("X-Ratelimit-Remaining-Tokens"))
	refill := int(time.Since(start).Seconds()*2000/60) + 1
	if left > 2000-500+refill {
		t.Fatalf("after a negative usage report %d tokens are left: it was refunded", left)
	}
	// Huge usage: the key goes into debt of at most its capacity, the
	// header says 0, never a negative number, and the wait is at most
	// what a full minute's debt takes to repay.
	total.Store(1 << 60)
	gatewaytest.RawRequest(t, "POST", url, body, closing)
	resp, env := gatewaytest.RawRequest(t, "POST", url, body, closing)
	if resp.StatusCode != 429 || env.Error.Type != "tokens" {
		t.Fatalf("after huge usage: %d %+v", resp.StatusCode, env.Error)
	}
	if rem := resp.Header.Get("X-Ratelimit-Remaining-Tokens"); rem != "0" {
		t.Fatalf("remaining tokens header %q", rem)
	}
	if wait, _ := strconv.Atoi(resp.Header.Get("Retry-After")); wait < 1 || wait > 120 {
		t.Fatalf("Retry-After %q: the key is locked for longer than its debt cap allows", resp.Header.Get("Retry-After"))
	}
}
