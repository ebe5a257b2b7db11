package gatewaytest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/modelgate/modelgate/internal/fakeembed"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// FakeEmbeddings is an OpenAI-compatible /v1/embeddings server speaking
// fakeembed's model; it can be told to misbehave.
type FakeEmbeddings struct {
	Mu      sync.Mutex
	Mode    string // ok, error, malformed, hang
	Inputs  [][]string
	Arrived chan struct{}
	// released, when set, is told when a hanging request ends because the
	// gateway gave it up.
	Released chan struct{}
	// HangAfter, when set, makes every request after that many hang.
	HangAfter int
}

// SetMode changes how the fake answers from now on.
func (f *FakeEmbeddings) SetMode(m string) {
	f.Mu.Lock()
	f.Mode = m
	f.Mu.Unlock()
}

// ServeHTTP answers an embeddings request as the mode says.
func (f *FakeEmbeddings) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "fake-embed" {
		http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	f.Mu.Lock()
	mode := f.Mode
	f.Inputs = append(f.Inputs, req.Input)
	if f.HangAfter > 0 && len(f.Inputs) > f.HangAfter {
		mode = "hang"
	}
	f.Mu.Unlock()
	select {
	case f.Arrived <- struct{}{}:
	default:
	}
	w.Header().Set("Content-Type", "application/json")
	switch mode {
	case "error":
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"message":"boom","type":"server_error"}}`)
		return
	case "malformed":
		io.WriteString(w, `{"data": [{"index": 0, "embedding": "not a vector"`)
		return
	case "hang":
		<-r.Context().Done()
		if f.Released != nil {
			f.Released <- struct{}{}
		}
		return
	}
	json.NewEncoder(w).Encode(fakeembed.Response(req.Model, req.Input))
}

// StartWithEmbeddings starts a gateway whose local upstream keeps its
// data as storage says (data_dir DIR, or postgres "DSN") and embeds with
// fake-embed through the embeddings server at embeddingsURL; its
// dashboard is at /dashboard.
func StartWithEmbeddings(t *testing.T, storage, embeddingsURL string) string {
	return testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s {
			owner alice
		}
		upstream emb openai {
			base_url %s/v1
		}
		upstream local local {
			%s
			embedding_model fake-embed
		}
		route embeddings.create to emb
		dashboard /dashboard
	}`, ClientKey, embeddingsURL, storage))
}
