package admission

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

func TestRequestLimitBurstAndReload(t *testing.T) {
	port := testgateway.FreePort(t)
	cfg := gatewaytest.LimitedGateway(port, "key "+gatewaytest.ClientKey+" {\n rpm 3\n }")
	testgateway.Load(t, cfg)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	chat := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`
	for i := 0; i < 2; i++ {
		resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", chat, gatewaytest.ChatHeaders)
		if resp.StatusCode != 200 || resp.Header.Get("X-Ratelimit-Limit-Requests") != "3" || resp.Header.Get("X-Ratelimit-Remaining-Requests") != strconv.Itoa(2-i) {
			t.Fatalf("request %d: %d %v", i, resp.StatusCode, resp.Header)
		}
		if resp.Header.Get("X-Ratelimit-Reset-Requests") == "" {
			t.Fatal("no reset header")
		}
	}
	// A reload of the same config keeps what was spent.
	testgateway.Reload(t, cfg)
	resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", chat, gatewaytest.ChatHeaders)
	if resp.StatusCode != 200 || resp.Header.Get("X-Ratelimit-Remaining-Requests") != "0" {
		t.Fatalf("third request after reload: %d remaining %q", resp.StatusCode, resp.Header.Get("X-Ratelimit-Remaining-Requests"))
	}
	resp, env := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", chat, gatewaytest.ChatHeaders)
	if resp.StatusCode != 429 || *env.Error.Code != "rate_limit_exceeded" || env.Error.Type != "requests" {
		t.Fatalf("fourth request: %d %+v", resp.StatusCode, env.Error)
	}
	if ra, _ := strconv.Atoi(resp.Header.Get("Retry-After")); ra < 1 || ra > 20 || resp.Header.Get("X-Ratelimit-Remaining-Requests") != "0" {
		t.Fatalf("429 headers %v", resp.Header)
	}
	// The SDK sees a typed rate-limit error.
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(gatewaytest.ClientKey), option.WithMaxRetries(0))
	_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}})
	if e := gatewaytest.AsAPIError(t, err); e.StatusCode != 429 {
		t.Fatalf("SDK: %v", err)
	}
}

// TestStreamedAndNonStreamedRepliesChargeTheSameTokens sends the same
// request streamed (without asking for usage) and not, on two keys with the
// same token limit: both end with the same tokens left, the streaming
// client never sees the usage chunk the gateway asked for, and a burst
// over the limit is refused.
func TestStreamedAndNonStreamedRepliesChargeTheSameTokens(t *testing.T) {
	const streamKey = "sk-stream-key-000000005"
	port := testgateway.FreePort(t)
	testgateway.Load(t, gatewaytest.LimitedGateway(port, "key "+gatewaytest.ClientKey+" {\n tpm 600\n }\n key "+streamKey+" {\n tpm 600\n }"))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	req := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"count tokens for me"}],"max_completion_tokens":30%s}`
	headers := func(key string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}
	}
	// Buckets refill as time passes (600/min, 10 a second: slow enough
	// that a loaded machine does not refill what was charged), so each
	// request is timed: what the two keys may differ by is what refilled
	// in the difference between their charge-to-probe times.
	var at [8]time.Time
	at[0] = time.Now()
	resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", fmt.Sprintf(req, ""), headers(gatewaytest.ClientKey))
	at[1] = time.Now()
	if resp.StatusCode != 200 {
		t.Fatalf("non-streamed: %d", resp.StatusCode)
	}
	at[2] = time.Now()
	resp, _ = gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", fmt.Sprintf(req, `,"stream":true`), headers(streamKey))
	at[3] = time.Now()
	if resp.StatusCode != 200 {
		t.Fatalf("streamed: %d", resp.StatusCode)
	}
	if strings.Contains(string(gatewaytest.LastBody), `"choices":[]`) || strings.Contains(string(gatewaytest.LastBody), `"usage":{`) {
		t.Fatalf("the client saw the usage chunk it did not ask for:\n%s", gatewaytest.LastBody)
	}
	// A tiny probe on each key shows what is left after settling. The
	// reply's settlement runs as its handler ends, which a client that
	// has read the whole reply can overtake: a first probe on each key
	// gives it the time, and the second one is read.
	probe := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}],"max_completion_tokens":1}`
	gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", probe, headers(gatewaytest.ClientKey))
	gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", probe, headers(streamKey))
	at[4] = time.Now()
	ra, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", probe, headers(gatewaytest.ClientKey))
	at[5] = time.Now()
	at[6] = time.Now()
	rb, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", probe, headers(streamKey))
	at[7] = time.Now()
	left, streamLeft := ra.Header.Get("X-Ratelimit-Remaining-Tokens"), rb.Header.Get("X-Ratelimit-Remaining-Tokens")
	a, errA := strconv.Atoi(left)
	b, errB := strconv.Atoi(streamLeft)
	// Longest and shortest each key's tokens may have refilled for.
	spread := max(at[5].Sub(at[0])-at[6].Sub(at[3]), at[7].Sub(at[2])-at[4].Sub(at[1]))
	if refill := int(math.Ceil(spread.Seconds()*600/60)) + 1; errA != nil || errB != nil || a-b > refill || b-a > refill {
		t.Fatalf("tokens left: non-streamed %q, streamed %q (refill in between at most %d)", left, streamLeft, refill)
	}
	if n, _ := strconv.Atoi(left); n >= 600-30 || n < 400 {
		t.Fatalf("tokens left %d: usage was not settled", n)
	}
	// A request asking for more than the limit can never pass.
	resp, env := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}],"max_completion_tokens":6000}`, headers(gatewaytest.ClientKey))
	if resp.StatusCode != 429 || env.Error.Type != "tokens" || resp.Header.Get("X-Ratelimit-Limit-Tokens") != "600" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("over the token limit: %d %+v %v", resp.StatusCode, env.Error, resp.Header)
	}
}
