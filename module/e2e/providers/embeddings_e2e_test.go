package providers

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestQuickstartEmbeddingsAndHybridSearch: the quick start answers
// embeddings offline in both encodings, and its vector stores search
// hybrid: a file sharing no word with the query is still ranked, by the
// vector list alone, under the file both rankings put first.
func TestQuickstartEmbeddingsAndHybridSearch(t *testing.T) {
	base := testgateway.Quickstart(t, "")
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testgateway.QuickstartDevKey), option.WithMaxRetries(0))
	ctx := context.Background()
	for _, format := range []openai.EmbeddingNewParamsEncodingFormat{openai.EmbeddingNewParamsEncodingFormatFloat, openai.EmbeddingNewParamsEncodingFormatBase64} {
		got, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "text-embedding-3-small", EncodingFormat: format,
			Dimensions: openai.Int(64), Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("the cat sleeps")}})
		if err != nil || len(got.Data) != 1 || got.Usage.PromptTokens != 3 {
			t.Fatalf("%s: %v %+v", format, err, got)
		}
		if format == openai.EmbeddingNewParamsEncodingFormatFloat && len(got.Data[0].Embedding) != 64 {
			t.Fatalf("float embedding of %d dimensions", len(got.Data[0].Embedding))
		}
		if format == openai.EmbeddingNewParamsEncodingFormatBase64 && !strings.Contains(got.RawJSON(), `"embedding":"`) {
			t.Fatalf("base64 reply %s", got.RawJSON()[:min(200, len(got.RawJSON()))])
		}
	}
	vs, err := client.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("offline")})
	if err != nil {
		t.Fatal(err)
	}
	cats := gatewaytest.Upload(t, client, "cats.txt", []byte("The cat sleeps on the warm windowsill all afternoon."))
	cars := gatewaytest.Upload(t, client, "cars.txt", []byte("Engines need oil, fuel and new tires before winter."))
	for _, id := range []string{cats, cars} {
		if f := gatewaytest.AttachAndPoll(t, client, vs.ID, id, nil); f.Status != "completed" {
			t.Fatalf("attach %s: %+v", id, f)
		}
	}
	res := gatewaytest.Search(t, client, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("cat windowsill")})
	if len(res) != 2 || res[0].FileID != cats || res[0].Score != 1 || res[1].FileID != cars || res[1].Score <= 0 || res[1].Score >= 0.5 {
		t.Fatalf("hybrid search: %+v", res)
	}
}

// TestUnservedOperationSaysDoNotRetry: a 501 carries x-should-retry:
// false, and openai-go with its default retries asks once.
func TestUnservedOperationSaysDoNotRetry(t *testing.T) {
	base := gatewaytest.StartLocal(t, t.TempDir())
	resp, env := gatewaytest.RawRequest(t, "POST", base+"/v1/moderations", `{"input":"x"}`, gatewaytest.ChatHeaders)
	if resp.StatusCode != 501 || resp.Header.Get("X-Should-Retry") != "false" || env.Error.Type != "not_implemented" {
		t.Fatalf("%d %q %+v", resp.StatusCode, resp.Header.Get("X-Should-Retry"), env.Error)
	}
	calls := 0
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(gatewaytest.ClientKey), option.WithMaxRetries(2),
		option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			calls++
			return next(r)
		}))
	if _, err := client.Moderations.New(context.Background(), openai.ModerationNewParams{Input: openai.ModerationNewParamsInputUnion{OfString: openai.String("x")}}); err == nil || calls != 1 {
		t.Fatalf("moderations: %v after %d calls", err, calls)
	}
}

// TestEmbeddingsThroughAProvider: requests are checked against the
// public schema before the provider sees them, replies after.
func TestEmbeddingsThroughAProvider(t *testing.T) {
	reply := `{"object":"list","model":"text-embedding-3-small","data":[{"object":"embedding","index":0,"embedding":[0.6,0.8]}],"usage":{"prompt_tokens":1,"total_tokens":1}}`
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply)
	})
	base := gatewaytest.StartGateway(t, provider.URL, "")
	client := gatewaytest.SDK(base)
	got, err := client.Embeddings.New(context.Background(), openai.EmbeddingNewParams{Model: "text-embedding-3-small",
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hello")}})
	if err != nil || len(got.Data) != 1 || got.Data[0].Embedding[1] != 0.8 {
		t.Fatalf("%v %+v", err, got)
	}
	seen := len(provider.Bodies)
	for body, param := range map[string]string{
		`{"model":"m","input":[` + strings.TrimSuffix(strings.Repeat(`"x",`, 2049), ",") + `]}`: "input",
		`{"model":"m","input":""}`:                        "input",
		`{"model":"m","input":"x","dimensions":0}`:        "dimensions",
		`{"model":"m","input":"x","encoding_format":"f"}`: "encoding_format",
		`{"input":"x"}`:                       "model",
		`{"model":"m","input":"x","extra":1}`: "extra",
	} {
		resp, env := gatewaytest.RawRequest(t, "POST", base+"/v1/embeddings", body, gatewaytest.ChatHeaders)
		if resp.StatusCode != 400 || env.Error.Param == nil || *env.Error.Param != param {
			t.Errorf("%.60s: %d %+v, want 400 param %s", body, resp.StatusCode, env.Error, param)
		}
	}
	if resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/embeddings", `{"model":"m","input":[`+strings.TrimSuffix(strings.Repeat(`"x",`, 2048), ",")+`]}`, gatewaytest.ChatHeaders); resp.StatusCode != 200 {
		t.Errorf("2048 inputs: %d", resp.StatusCode)
	}
	if len(provider.Bodies) != seen+1 {
		t.Fatalf("the provider saw %d refused requests", len(provider.Bodies)-seen-1)
	}

	reply = `{"object":"list","model":"m","data":[{"object":"embedding","index":0,"embedding":"AAAA"}]}` // no usage
	rec := filepath.Join(t.TempDir(), "r.jsonl")
	strict := gatewaytest.CheckGateway(t, provider.URL, "strict", rec)
	resp, env := gatewaytest.RawRequest(t, "POST", strict+"/v1/embeddings", `{"model":"m","input":"x"}`, gatewaytest.ChatHeaders)
	if resp.StatusCode != 502 || *env.Error.Code != "upstream_nonconforming" {
		t.Fatalf("strict: %d %+v", resp.StatusCode, env.Error)
	}
	findings, _ := json.Marshal(gatewaytest.ReadRecords(t, rec, 1)[0]["findings"])
	if !strings.Contains(string(findings), "usage") {
		t.Fatalf("findings %s", findings)
	}
}
