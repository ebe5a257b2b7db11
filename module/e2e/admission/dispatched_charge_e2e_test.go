package admission

import (
	"bufio"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/upstreams/tokens"
)

// TestWorkDispatchedInsideARequestIsChargedOnce: what the quick start's
// local upstream dispatches on the caller's key while serving a request
// (a response's chat, a hybrid search's query embeddings) is part of
// that request. A response is one request and its usage in tokens to its
// key's limits, streamed or not, as when a provider serves it; a hybrid
// search is one request and its query's embedding tokens; a key allowed
// one request at a time can make both. After each, a probe (embeddings of
// "x", estimated at 1 token) shows the bucket less what the request used
// and the probe's token, plus at most what refilled meanwhile (100 tokens
// and 0.1 request a second, both measured).
func TestWorkDispatchedInsideARequestIsChargedOnce(t *testing.T) {
	const limits = " {\n owner dev\n tpm 6000\n rpm 6\n max_concurrent 1\n }\n"
	keys := []string{"sk-charged-once-json-0001", "sk-charged-once-stream-01", "sk-charged-once-search-01"}
	base := testgateway.Quickstart(t, "key "+keys[0]+limits+"key "+keys[1]+limits+"key "+keys[2]+limits)
	input := strings.Repeat("the river, the bridge and the market by the station ", 80)
	for i, stream := range []bool{false, true} {
		used := chargedOnce(t, base, keys[i], func(h map[string]string) int64 {
			resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/responses",
				`{"model":"reference","input":"`+input+`","stream":`+strconv.FormatBool(stream)+`}`, h)
			if resp.StatusCode != 200 {
				t.Fatalf("stream %v: %d %s", stream, resp.StatusCode, gatewaytest.LastBody)
			}
			return responseUsage(t, gatewaytest.LastBody, stream)
		})
		if used < 900 {
			t.Errorf("stream %v: a response of about 900 input tokens used %d", stream, used)
		}
	}
	// The store is made and ingested on the development key (no limits);
	// the limited key of the same owner searches it.
	dev := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testgateway.QuickstartDevKey), option.WithMaxRetries(0))
	vs, err := dev.VectorStores.New(context.Background(), openai.VectorStoreNewParams{Name: openai.String("charged once")})
	if err != nil {
		t.Fatal(err)
	}
	if f := gatewaytest.AttachAndPoll(t, dev, vs.ID, gatewaytest.Upload(t, dev, "cats.txt", []byte("The cat sleeps on the warm windowsill.")), nil); f.Status != "completed" {
		t.Fatalf("attach: %+v", f)
	}
	const q = "cat windowsill"
	chargedOnce(t, base, keys[2], func(h map[string]string) int64 {
		h = map[string]string{"Authorization": h["Authorization"], "Content-Type": "application/json", "OpenAI-Beta": "assistants=v2"}
		resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/vector_stores/"+vs.ID+"/search", `{"query":"`+q+`"}`, h)
		if resp.StatusCode != 200 || !strings.Contains(string(gatewaytest.LastBody), "windowsill") {
			t.Fatalf("hybrid search: %d %s", resp.StatusCode, gatewaytest.LastBody)
		}
		return int64(tokens.ForModel("reference-embedding").Count(q))
	})
}

// chargedOnce makes a request on a key of tpm 6000 and rpm 6 (do returns
// the tokens it should be charged), probes the key and checks that it was
// charged one request and those tokens; it returns them.
func chargedOnce(t *testing.T, base, key string, do func(h map[string]string) int64) int64 {
	t.Helper()
	h := map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}
	start := time.Now()
	used := do(h)
	probe, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/embeddings", `{"model":"reference","input":"x"}`, h)
	elapsed := time.Since(start).Seconds()
	if probe.StatusCode != 200 {
		t.Fatalf("%s: probe %d %s", key, probe.StatusCode, gatewaytest.LastBody)
	}
	tokens, err1 := strconv.ParseFloat(probe.Header.Get("X-Ratelimit-Remaining-Tokens"), 64)
	requests, err2 := strconv.ParseFloat(probe.Header.Get("X-Ratelimit-Remaining-Requests"), 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("%s: remaining %q tokens, %q requests", key, probe.Header.Get("X-Ratelimit-Remaining-Tokens"), probe.Header.Get("X-Ratelimit-Remaining-Requests"))
	}
	if want := 6000 - float64(used) - 1; tokens < want || tokens > want+100*elapsed+1 {
		t.Errorf("%s: %v tokens left after a request that used %d and a probe of 1 in %.2fs; want %v (+ refill)", key, tokens, used, elapsed, want)
	}
	if requests < 4 || requests > 4+0.1*elapsed {
		t.Errorf("%s: %v requests left after a request and a probe in %.2fs; want 4 of 6", key, requests, elapsed)
	}
	return used
}

// responseUsage is the total_tokens of a response's reply: its JSON, or
// the response.completed event of its stream.
func responseUsage(t *testing.T, body []byte, stream bool) int64 {
	t.Helper()
	var r struct {
		Response struct {
			Usage struct {
				TotalTokens int64 `json:"total_tokens"`
			} `json:"usage"`
		} `json:"response"`
		Usage struct {
			TotalTokens int64 `json:"total_tokens"`
		} `json:"usage"`
	}
	if !stream {
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		return r.Usage.TotalTokens
	}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(data, `"type":"response.completed"`) {
			if err := json.Unmarshal([]byte(data), &r); err != nil {
				t.Fatalf("%v: %s", err, data)
			}
			return r.Response.Usage.TotalTokens
		}
	}
	t.Fatalf("no response.completed event in %s", body)
	return 0
}
