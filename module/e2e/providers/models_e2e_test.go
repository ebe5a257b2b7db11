package providers

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"testing"

	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestModelsRetrieveAnswersEveryListedModel: on the quick start (no
// provider), GET /v1/models/{model} answers each model GET /v1/models
// lists, the same object, and 404 model_not_found naming model for any
// other. Before, it was 501 for every model.
func TestModelsRetrieveAnswersEveryListedModel(t *testing.T) {
	client := gatewaytest.SDK(testgateway.Quickstart(t, ""), option.WithAPIKey(testgateway.QuickstartDevKey))
	ctx := context.Background()
	list, err := client.Models.List(ctx)
	if err != nil || len(list.Data) == 0 {
		t.Fatalf("list: %v %v", err, list)
	}
	for _, want := range list.Data {
		got, err := client.Models.Get(ctx, want.ID)
		if err != nil || got.ID != want.ID || got.Object != "model" || got.OwnedBy != want.OwnedBy || got.Created != want.Created {
			t.Fatalf("%s: %v %+v, want %+v", want.ID, err, got, want)
		}
	}
	_, err = client.Models.Get(ctx, "no-such-model")
	if e := gatewaytest.AsAPIError(t, err); e.StatusCode != http.StatusNotFound || e.Code != "model_not_found" || e.Param != "model" {
		t.Fatalf("an unlisted model: %v", err)
	}
}

// TestModelsRetrieveWithAProvider: with an openai upstream, the gateway
// answers for the models it lists (here the reference engine's, which the
// provider does not know) and passes the others on to the provider.
func TestModelsRetrieveWithAProvider(t *testing.T) {
	provider := gatewaytest.NewCounting(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%q,"object":"model","created":1,"owned_by":"provider"}`, path.Base(r.URL.Path))
	})
	client := gatewaytest.SDK(testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		upstream p {
			base_url %s/v1
		}
		route chat.completions.create model reference to reference
		route chat.completions.create to p
	}`, gatewaytest.ClientKey, provider.URL)))
	ctx := context.Background()
	if m, err := client.Models.Get(ctx, "reference"); err != nil || m.ID != "reference" || m.OwnedBy != "reference" || provider.Hits.Load() != 0 {
		t.Fatalf("a listed model: %v %+v, the provider asked %d times", err, m, provider.Hits.Load())
	}
	if m, err := client.Models.Get(ctx, "gpt-4o"); err != nil || m.ID != "gpt-4o" || m.OwnedBy != "provider" || provider.Hits.Load() != 1 {
		t.Fatalf("a provider's model: %v %+v, the provider asked %d times", err, m, provider.Hits.Load())
	}
}
