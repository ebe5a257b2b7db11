package providers

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

const embeddingReply = `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,-0.2,0.3]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":2,"total_tokens":2}}`

const responsesStream = "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0}\n\n" +
	"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\",\"sequence_number\":1}\n\n" +
	"event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":2}\n\n"

// passthroughProvider answers the provider operations the gateway does not
// implement itself; for an image edit it answers the SHA-256 of the image
// part it received, to prove the multipart body arrived intact.
func passthroughProvider(t *testing.T) *gatewaytest.FakeProvider {
	return gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/embeddings":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, embeddingReply)
		case "/v1/responses":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, responsesStream)
		case "/v1/images/edits", "/v1/fine_tuning/jobs":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"path":%q}`, r.URL.Path)
		default:
			http.NotFound(w, r)
		}
	})
}

func TestProviderOperationsPassThrough(t *testing.T) {
	provider := passthroughProvider(t)
	base := gatewaytest.StartGateway(t, provider.URL, "route unknown to provider")
	client := gatewaytest.SDK(base)
	ctx := context.Background()

	emb, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "text-embedding-3-small",
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hello world")}})
	if err != nil || len(emb.Data) != 1 || emb.Data[0].Embedding[1] != -0.2 {
		t.Fatalf("embeddings: %v %+v", err, emb)
	}
	req, body := provider.Last(t)
	if req.Header.Get("Authorization") != "Bearer "+gatewaytest.UpstreamKey || !strings.Contains(string(body), `"input":"hello world"`) {
		t.Fatalf("embeddings arrived as %v %s", req.Header, body)
	}

	headers := map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey, "Content-Type": "application/json"}
	resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/responses", `{"model":"gpt-5","input":"hi","stream":true}`, headers)
	if resp.StatusCode != 200 || string(gatewaytest.LastBody) != responsesStream || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("streamed responses: %d %q", resp.StatusCode, gatewaytest.LastBody)
	}
	if req, _ := provider.Last(t); req.Header.Get("Authorization") != "Bearer "+gatewaytest.UpstreamKey {
		t.Fatalf("responses arrived with %q", req.Header.Get("Authorization"))
	}

	// An image edit: a 3 MiB multipart upload, streamed through unread.
	image := make([]byte, 3<<20)
	rand.Read(image)
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	mw.WriteField("model", "gpt-image-1")
	mw.WriteField("prompt", "add a hat")
	part, _ := mw.CreateFormFile("image", "cat.png")
	part.Write(image)
	mw.Close()
	resp, _ = gatewaytest.RawRequest(t, "POST", base+"/v1/images/edits", form.String(), map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey, "Content-Type": mw.FormDataContentType()})
	if resp.StatusCode != 200 {
		t.Fatalf("image edit: %d %s", resp.StatusCode, gatewaytest.LastBody)
	}
	req, body = provider.Last(t)
	_, params, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("image edit arrived as %q", req.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var got []byte
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		if p.FormName() == "image" {
			got, _ = io.ReadAll(p)
		}
	}
	if sha256.Sum256(got) != sha256.Sum256(image) || req.Header.Get("Authorization") != "Bearer "+gatewaytest.UpstreamKey {
		t.Fatalf("the image arrived changed (%d bytes) or with the wrong key", len(got))
	}

	// A path the operation table does not know, passed through by the route.
	resp, _ = gatewaytest.RawRequest(t, "GET", base+"/v1/fine_tuning/jobs", "", map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey})
	if resp.StatusCode != 200 || !strings.Contains(string(gatewaytest.LastBody), "/v1/fine_tuning/jobs") {
		t.Fatalf("unknown path passthrough: %d %s", resp.StatusCode, gatewaytest.LastBody)
	}
}

// TestUnknownPathsAre404WithoutPassthrough: without a route for unknown
// paths, a path outside the public API is 404 and an unserved public one
// 501 naming its operation; neither reaches the provider.
func TestUnknownPathsAre404WithoutPassthrough(t *testing.T) {
	provider := passthroughProvider(t)
	base := gatewaytest.StartGateway(t, provider.URL, "")
	resp, env := gatewaytest.RawRequest(t, "GET", base+"/v1/no_such_api/jobs", "", map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey})
	if resp.StatusCode != 404 || env.Error.Type != "invalid_request_error" {
		t.Fatalf("unknown path without passthrough: %d %s", resp.StatusCode, gatewaytest.LastBody)
	}
	resp, env = gatewaytest.RawRequest(t, "GET", base+"/v1/fine_tuning/jobs", "", map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey})
	if resp.StatusCode != 501 || env.Error.Type != "not_implemented" || !strings.Contains(env.Error.Message, "listPaginatedFineTuningJobs") {
		t.Fatalf("unserved public path without passthrough: %d %s", resp.StatusCode, gatewaytest.LastBody)
	}
	provider.Mu.Lock()
	defer provider.Mu.Unlock()
	if len(provider.Requests) != 0 {
		t.Fatal("the unknown path reached the provider")
	}
}

// TestBatchAgainstEmbeddingsThroughProvider: embeddings have a route to a
// provider, so a batch on /v1/embeddings runs its lines there.
func TestBatchAgainstEmbeddingsThroughProvider(t *testing.T) {
	provider := passthroughProvider(t)
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		upstream provider {
			base_url %s/v1
			api_key %s
		}
		upstream local local {
			data_dir %s
		}
		route embeddings.create to provider
	}`, gatewaytest.ClientKey, provider.URL, gatewaytest.UpstreamKey, t.TempDir()))
	client := gatewaytest.SDK(base)
	var input strings.Builder
	for i := range 12 {
		fmt.Fprintf(&input, `{"custom_id":"e%d","method":"POST","url":"/v1/embeddings","body":{"model":"text-embedding-3-small","input":["a","b"]}}`+"\n", i)
	}
	b, err := client.Batches.New(context.Background(), openai.BatchNewParams{InputFileID: gatewaytest.UploadBatchFile(t, client, input.String()),
		Endpoint: openai.BatchNewParamsEndpointV1Embeddings, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	done := gatewaytest.PollBatch(t, client, b.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
	lines := gatewaytest.ResultLines(t, client, done.OutputFileID)
	if done.Status != openai.BatchStatusCompleted || done.RequestCounts.Completed != 12 || len(lines) != 12 || done.Model != "text-embedding-3-small" {
		t.Fatalf("embeddings batch: %d lines, %s", len(lines), done.RawJSON())
	}
	if !strings.Contains(done.RawJSON(), `"input_tokens":24`) {
		t.Fatalf("usage not summed: %s", done.RawJSON())
	}
	provider.Mu.Lock()
	n := len(provider.Requests)
	provider.Mu.Unlock()
	if n != 12 {
		t.Fatalf("the provider got %d requests for 12 lines", n)
	}
}

func TestDeprecatedParameterHeaders(t *testing.T) {
	base := gatewaytest.StartLocal(t, t.TempDir())
	headers := map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey, "Content-Type": "application/json"}
	resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"max_tokens":5}`, headers)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Deprecation"), "@") {
		t.Fatalf("max_tokens: %d Deprecation %q", resp.StatusCode, resp.Header.Get("Deprecation"))
	}
	resp, _ = gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":5,"seed":7}`, headers)
	if resp.StatusCode != 200 || resp.Header.Get("Deprecation") != "" {
		t.Fatalf("no deprecated parameter: %d Deprecation %q", resp.StatusCode, resp.Header.Get("Deprecation"))
	}
}
