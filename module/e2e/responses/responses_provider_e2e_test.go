package responses

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// providerResponse is a response object as a provider sends it, with a
// usage of 300 + 700 tokens.
const providerResponse = `{"id":"resp_p1","object":"response","created_at":1,"status":"completed","error":null,"incomplete_details":null,` +
	`"instructions":null,"max_output_tokens":null,"model":"gpt-4o","output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant",` +
	`"content":[{"type":"output_text","text":"Hi there","annotations":[]}]}],"parallel_tool_calls":true,"previous_response_id":null,` +
	`"reasoning":{"effort":null,"summary":null},"store":true,"temperature":1,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],` +
	`"top_p":1,"truncation":"disabled","usage":{"input_tokens":300,"input_tokens_details":{"cached_tokens":0},"output_tokens":700,` +
	`"output_tokens_details":{"reasoning_tokens":0},"total_tokens":1000},"metadata":{}}`

// providerStream is the events of providerResponse.
func providerStream(breakIt bool) string {
	pending := strings.Replace(strings.Replace(providerResponse, `"status":"completed"`, `"status":"in_progress"`, 1), `"usage":{"input_tokens":300,"input_tokens_details":{"cached_tokens":0},"output_tokens":700,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":1000}`, `"usage":null`, 1)
	events := []string{
		`{"type":"response.created","sequence_number":0,"response":` + pending + `}`,
		`{"type":"response.in_progress","sequence_number":1,"response":` + pending + `}`,
		`{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"type":"message","id":"msg_1","status":"in_progress","role":"assistant","content":[]}}`,
		`{"type":"response.content_part.added","sequence_number":3,"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}`,
		`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi"}`,
		`{"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_1","output_index":0,"content_index":0,"delta":" there"}`,
		`{"type":"response.output_text.done","sequence_number":6,"item_id":"msg_1","output_index":0,"content_index":0,"text":"Hi there"}`,
		`{"type":"response.content_part.done","sequence_number":7,"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"Hi there","annotations":[]}}`,
		`{"type":"response.output_item.done","sequence_number":8,"output_index":0,"item":{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hi there","annotations":[]}]}}`,
		`{"type":"response.completed","sequence_number":9,"response":` + providerResponse + `}`,
	}
	if breakIt {
		events[5] = strings.Replace(events[5], `"sequence_number":5`, `"sequence_number":4`, 1)
		events[4] = strings.Replace(events[4], `"content_index":0,`, ``, 1)
		events = events[:len(events)-1]
	}
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", e[9:strings.Index(e, `","`)], e)
	}
	return b.String()
}

func responsesProvider(t *testing.T, reply *string, broken bool) *gatewaytest.FakeProvider {
	var p *gatewaytest.FakeProvider
	p = gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		_, body := p.Last(t)
		if strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, providerStream(broken))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodDelete:
			io.WriteString(w, `{"id":"resp_p1","object":"response","deleted":true}`)
		case strings.HasSuffix(r.URL.Path, "/input_items"):
			io.WriteString(w, `{"object":"list","data":[{"type":"message","id":"msg_0","role":"user","content":[{"type":"input_text","text":"hi"}]}],"first_id":"msg_0","last_id":"msg_0","has_more":false}`)
		default:
			io.WriteString(w, *reply)
		}
	})
	return p
}

// TestResponsesThroughAProvider: openai-go through the gateway to a
// provider's Responses interface; requests checked before it, replies and
// stream events after, tokens charged from the reply's usage (streams too).
func TestResponsesThroughAProvider(t *testing.T) {
	reply := providerResponse
	provider := responsesProvider(t, &reply, false)
	base := gatewaytest.StartGateway(t, provider.URL, "")
	client := gatewaytest.SDK(base)
	ctx := context.Background()
	got, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o", Input: text("hi")})
	if err != nil || got.OutputText() != "Hi there" {
		t.Fatalf("%v %+v", err, got)
	}
	stream := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-4o", Input: text("hi")})
	var deltas string
	for stream.Next() {
		deltas += stream.Current().Delta
	}
	if stream.Err() != nil || deltas != "Hi there" {
		t.Fatalf("stream: %v %q", stream.Err(), deltas)
	}
	if got, err := client.Responses.Get(ctx, "resp_p1", responses.ResponseGetParams{}); err != nil || got.ID != "resp_p1" {
		t.Fatalf("retrieve: %v", err)
	}
	if page, err := client.Responses.InputItems.List(ctx, "resp_p1", responses.InputItemListParams{}); err != nil || len(page.Data) != 1 {
		t.Fatalf("input items: %v", err)
	}
	if err := client.Responses.Delete(ctx, "resp_p1"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	seen := len(provider.Bodies)
	for body, param := range map[string]string{
		`{"model":"gpt-4o","input":"x","temperature":2.5}`:                                   "temperature",
		`{"model":"gpt-4o","input":"x","max_output_tokens":15}`:                              "max_output_tokens",
		`{"model":"gpt-4o","input":"x","metadata":` + gatewaytest.Pairs17() + `}`:            "metadata",
		`{"model":"gpt-4o","input":"x","text":{"format":{"type":"json_schema","name":"n"}}}`: "text.format.schema",
		`{"model":"gpt-4o","input":"x","reasoning":{"effort":"huge"}}`:                       "reasoning.effort",
		`{"model":"gpt-4o","input":"x","tool_choice":"sometimes"}`:                           "tool_choice",
	} {
		resp, env := gatewaytest.RawRequest(t, "POST", base+"/v1/responses", body, gatewaytest.ChatHeaders)
		if resp.StatusCode != 400 || env.Error.Param == nil || *env.Error.Param != param {
			t.Errorf("%s: %d %+v, want 400 param %s", body, resp.StatusCode, env.Error, param)
		}
	}
	if resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/responses", `{"model":"gpt-4o","input":"x","max_output_tokens":16}`, gatewaytest.ChatHeaders); resp.StatusCode != 200 {
		t.Errorf("max_output_tokens 16: %d", resp.StatusCode)
	}
	if n := len(provider.Bodies) - seen; n != 1 {
		t.Fatalf("the provider saw %d requests, want only the valid one", n)
	}
}

// TestOpenAIGoThroughAProvider runs openai-go's Responses conversation
// (testResponses: tool call round trip through previous_response_id,
// structured output, input items, store false, delete) and embeddings in
// both encodings against the quick start with responses.* and
// embeddings.create routed to a provider: a second modelgate site serving
// them offline, every reply checked strictly.
func TestOpenAIGoThroughAProvider(t *testing.T) {
	base, reached := gatewaytest.QuickstartWithProvider(t)
	client := gatewaytest.SDK(base, option.WithAPIKey(testgateway.QuickstartDevKey))
	testResponses(t, client)
	embed := func(format openai.EmbeddingNewParamsEncodingFormat) *openai.CreateEmbeddingResponse {
		got, err := client.Embeddings.New(context.Background(), openai.EmbeddingNewParams{Model: "text-embedding-3-small", EncodingFormat: format,
			Dimensions: openai.Int(64), Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"the cat sleeps", "engines need oil"}}})
		if err != nil || len(got.Data) != 2 || got.Usage.PromptTokens == 0 {
			t.Fatalf("%s embeddings: %v %+v", format, err, got)
		}
		return got
	}
	floats, packed := embed(openai.EmbeddingNewParamsEncodingFormatFloat), embed(openai.EmbeddingNewParamsEncodingFormatBase64)
	for i, d := range packed.Data {
		var item struct{ Embedding string }
		if err := json.Unmarshal([]byte(d.RawJSON()), &item); err != nil {
			t.Fatal(err)
		}
		raw, err := base64.StdEncoding.DecodeString(item.Embedding)
		want := floats.Data[i].Embedding
		if err != nil || len(raw) != 4*len(want) || len(want) != 64 {
			t.Fatalf("base64 embedding %d: %v, %d bytes for %d floats", i, err, len(raw), len(want))
		}
		for j, f := range want {
			if got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:])); got != float32(f) {
				t.Fatalf("embedding %d[%d]: base64 %v, float %v", i, j, got, f)
			}
		}
	}
	if n := reached(); n["/v1/responses"] < 10 || n["/v1/embeddings"] != 2 {
		t.Fatalf("the provider served %v", n)
	}
}

func TestResponsesCheckedWhenAProviderServesThem(t *testing.T) {
	reply := strings.Replace(providerResponse, `"output":[`, `"outputs":[`, 1)
	provider := responsesProvider(t, &reply, true)
	strict := gatewaytest.CheckGateway(t, provider.URL, "strict", filepath.Join(t.TempDir(), "r.jsonl"))
	resp, env := gatewaytest.RawRequest(t, "POST", strict+"/v1/responses", `{"model":"gpt-4o","input":"x"}`, gatewaytest.ChatHeaders)
	if resp.StatusCode != 502 || *env.Error.Code != "upstream_nonconforming" || !strings.Contains(env.Error.Message, "output") {
		t.Fatalf("strict: %d %+v", resp.StatusCode, env.Error)
	}
	rec := filepath.Join(t.TempDir(), "r.jsonl")
	report := gatewaytest.CheckGateway(t, provider.URL, "report", rec)
	resp, _ = gatewaytest.RawRequest(t, "POST", report+"/v1/responses", `{"model":"gpt-4o","input":"x","stream":true}`, gatewaytest.ChatHeaders)
	// Relayed as sent; closed without its last event, it ends with the
	// gateway's error event (upstreams.Relay).
	cut, sent := strings.CutPrefix(string(gatewaytest.LastBody), providerStream(true))
	if resp.StatusCode != 200 || !sent || !strings.HasPrefix(cut, "event: error\ndata: {") || !strings.Contains(cut, `"code":"upstream_stream_cut"`) {
		t.Fatalf("stream not relayed as sent, then cut: %d\n%q\nwant %q then the error event", resp.StatusCode, gatewaytest.LastBody, providerStream(true))
	}
	findings := fmt.Sprint(gatewaytest.ReadRecords(t, rec, 1)[0]["findings"])
	for _, want := range []string{"content_index: is required", "sequence_number 4 does not follow 4", "upstream stream ended early"} {
		if !strings.Contains(findings, want) {
			t.Errorf("findings lack %q: %s", want, findings)
		}
	}
	// The well-formed stream, whose 300 input tokens are the gateway's
	// count of the request's (within the tolerance), has no finding.
	good := responsesProvider(t, &reply, false)
	rec = filepath.Join(t.TempDir(), "r.jsonl")
	report = gatewaytest.CheckGateway(t, good.URL, "report", rec)
	gatewaytest.RawRequest(t, "POST", report+"/v1/responses", `{"model":"gpt-4o","input":"`+strings.Repeat("word ", 290)+`","stream":true}`, gatewaytest.ChatHeaders)
	if f := gatewaytest.ReadRecords(t, rec, 1)[0]["findings"]; f != nil {
		t.Fatalf("a conforming stream has findings: %v", f)
	}
}

// TestResponsesChargeTheirUsage: a response's tokens (from its usage, in
// the JSON reply or the stream's last event) are what the key is charged.
func TestResponsesChargeTheirUsage(t *testing.T) {
	reply := providerResponse
	provider := responsesProvider(t, &reply, false)
	const streamKey = "sk-stream-key-000000005"
	base := gatewaytest.StartGateway(t, provider.URL, "key "+streamKey+" {\n tpm 6000\n }\n key sk-json-key-0000000006 {\n tpm 6000\n }")
	for _, c := range []struct{ key, extra string }{{"sk-json-key-0000000006", ""}, {streamKey, `,"stream":true`}} {
		h := map[string]string{"Authorization": "Bearer " + c.key, "Content-Type": "application/json"}
		if resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/responses", `{"model":"gpt-4o","input":"hi"`+c.extra+`}`, h); resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", c.key, resp.StatusCode, gatewaytest.LastBody)
		}
		resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/responses", `{"model":"gpt-4o","input":"x","max_output_tokens":16}`, h)
		left, err := strconv.Atoi(resp.Header.Get("X-Ratelimit-Remaining-Tokens"))
		// 6000 less the 1000 used and the probe's estimate (under 40),
		// plus what refilled meanwhile (100 a second).
		if err != nil || left > 5000 || left < 4800 {
			t.Fatalf("%s: %d tokens left (%v)", c.key, left, err)
		}
	}
}
