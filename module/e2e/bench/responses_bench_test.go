package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/upstreams/tokens"
)

// benchmarkResponses creates responses in the quick start (local store,
// reference engine, over HTTP) from a conversation of about promptTokens
// tokens; it reports responses/s.
func benchmarkResponses(b *testing.B, promptTokens int) {
	base := testgateway.Quickstart(b, "")
	enc := tokens.ForModel("reference")
	var input []any
	for n := 0; n < promptTokens; {
		text := fmt.Sprintf("Turn %d: tell me about the river, the bridge and the market by the station. ", len(input))
		input = append(input, map[string]any{"role": []string{"user", "assistant"}[len(input)%2], "content": text})
		n += enc.Count(text) + 4
	}
	input = append(input, map[string]any{"role": "user", "content": "And now?"})
	body, _ := json.Marshal(map[string]any{"model": "reference", "input": input})
	var prompt int64
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/responses", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testgateway.QuickstartDevKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		reply, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var r struct {
			Usage struct {
				InputTokens int64 `json:"input_tokens"`
			} `json:"usage"`
		}
		if resp.StatusCode != 200 || json.Unmarshal(reply, &r) != nil || !strings.Contains(string(reply), `"status":"completed"`) {
			b.Fatalf("%d %s", resp.StatusCode, reply)
		}
		prompt = r.Usage.InputTokens
	}
	b.ReportMetric(float64(prompt), "prompt-tokens")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "responses/s")
}

func BenchmarkResponsesShort(b *testing.B)          { benchmarkResponses(b, 0) }
func BenchmarkResponses4kConversation(b *testing.B) { benchmarkResponses(b, 4000) }
