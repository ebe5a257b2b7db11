package reference_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/reference"
)

// replyBudget is the engine's limit on what one reply holds.
const replyBudget = 4 << 20

// logprobsRequest asks for a string of minLength bytes with logprobs and
// top alternatives, as one chat completion of n choices.
func logprobsRequest(minLength, top, n int, stream bool) string {
	return fmt.Sprintf(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"n":%d,"stream":%t,"logprobs":true,"top_logprobs":%d,
		"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"string","minLength":%d}}}}`, n, stream, top, minLength)
}

// serveRaw answers body and returns the status and the reply's bytes.
func serveRaw(t *testing.T, body string) (int, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
	if err := (reference.Engine{}).ServeCall(rec, &upstreams.Call{Operation: upstreams.OpChatCompletionsCreate, Body: []byte(body), Request: r}); err != nil {
		upstreams.WriteError(rec, err.(*upstreams.Error))
	}
	return rec.Code, rec.Body.Bytes()
}

// TestReplyBudgetRefusesLogprobsAmplification: the 311-byte request whose
// reply was 184 MiB (a 1,000,000-byte string with logprobs and 20 top
// alternatives a token) is a 400 naming top_logprobs, streamed or not,
// and refusing it allocates a small multiple of the budget; without
// top_logprobs it is a 400 naming logprobs; every choice counts (20
// choices of a reply one choice may hold are refused); the same string
// alone (1 MiB of text) is still served.
func TestReplyBudgetRefusesLogprobsAmplification(t *testing.T) {
	cases := []struct {
		name, body, param string
	}{
		{"top_logprobs 20", logprobsRequest(1_000_000, 20, 1, false), "top_logprobs"},
		{"top_logprobs 20 streamed", logprobsRequest(1_000_000, 20, 1, true), "top_logprobs"},
		{"logprobs only", logprobsRequest(1_000_000, 0, 1, false), "logprobs"},
		{"20 choices of what one may hold", logprobsRequest(2000, 20, 20, true), "top_logprobs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			status, out := post(t, c.body)
			runtime.ReadMemStats(&after)
			e, _ := out["error"].(map[string]any)
			if status != http.StatusBadRequest || e["param"] != c.param || e["type"] != "invalid_request_error" {
				t.Fatalf("status %d, %v; want 400 naming %s", status, out, c.param)
			}
			if msg, _ := e["message"].(string); !strings.Contains(msg, c.param) || !strings.Contains(msg, fmt.Sprint(replyBudget)) {
				t.Fatalf("message %q", msg)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 32*replyBudget {
				t.Fatalf("refusing the request allocated %d MiB", grew>>20)
			}
		})
	}
	if status, out := post(t, logprobsRequest(2000, 20, 1, false)); status != http.StatusOK {
		t.Fatalf("one choice: %d %v", status, out)
	}
	if status, out := post(t, schemaRequest(`{"type":"string","minLength":1000000}`)); status != http.StatusOK {
		t.Fatalf("the string without logprobs: %d %v", status, out)
	}
}

// TestReplyBudgetBoundary finds the longest string whose reply with 20
// top alternatives a token the budget holds: it is served, and its reply
// is within the budget yet more than three quarters of it (the count is
// close to what is sent); one byte longer is a 400 naming top_logprobs.
func TestReplyBudgetBoundary(t *testing.T) {
	served := func(minLength int) (bool, []byte) {
		status, body := serveRaw(t, logprobsRequest(minLength, 20, 1, false))
		if status != http.StatusOK && status != http.StatusBadRequest {
			t.Fatalf("minLength %d: status %d %s", minLength, status, body)
		}
		return status == http.StatusOK, body
	}
	lo, hi := 100, 1_000_000
	if ok, _ := served(lo); !ok {
		t.Fatalf("minLength %d refused", lo)
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if ok, _ := served(mid); ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	_, largest := served(lo)
	t.Logf("the longest string served with top_logprobs 20 is %d bytes; its reply %d bytes", lo, len(largest))
	if len(largest) > replyBudget || len(largest) < replyBudget*3/4 {
		t.Fatalf("the largest reply served is %d bytes, budget %d", len(largest), replyBudget)
	}
	status, out := post(t, logprobsRequest(lo+1, 20, 1, false))
	if e, _ := out["error"].(map[string]any); status != http.StatusBadRequest || e["param"] != "top_logprobs" {
		t.Fatalf("one byte longer: %d %v", status, out)
	}
}

// TestReplyBudgetCountsLiterals: an array of 100,000 copies of a 10 KB
// const would render 1 GB; a const counts as the text it is, so the
// schema is refused.
func TestReplyBudgetCountsLiterals(t *testing.T) {
	long := strings.Repeat("y", 10_000)
	for _, schema := range []string{
		`{"type":"array","minItems":99000,"items":{"const":"` + long + `"}}`,
		`{"type":"array","minItems":99000,"items":{"enum":["` + long + `"]}}`,
		`{"type":"array","minItems":99000,"items":{"const":{"k":"` + long + `"}}}`,
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		status, out := post(t, schemaRequest(schema))
		runtime.ReadMemStats(&after)
		if e, _ := out["error"].(map[string]any); status != http.StatusBadRequest || e["param"] != "response_format" {
			t.Fatalf("status %d %v", status, out)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 32*replyBudget {
			t.Fatalf("refusing the schema allocated %d MiB", grew>>20)
		}
	}
}
