package admission

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/schemas"
)

// TestSearchShapeWithBothBetaHeaders: openai-go (which always sends
// OpenAI-Beta: assistants=v2) with an extra Vendor-Beta header, as the
// missing-header error used to suggest, gets vector store search results
// in the public shape its types read; Vendor-Beta alone gets the spec's
// shape. The missing-header error names both headers. Before, any
// Vendor-Beta header chose the spec's shape, which openai-go read as empty
// results.
func TestSearchShapeWithBothBetaHeaders(t *testing.T) {
	base := gatewaytest.StartLocal(t, t.TempDir())
	client := gatewaytest.SDK(base)
	ctx := context.Background()
	vs, err := client.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("beta")})
	if err != nil {
		t.Fatal(err)
	}
	file := gatewaytest.Upload(t, client, "notes.txt", []byte("The zebra migration crosses the river in July."))
	gatewaytest.AttachAndPoll(t, client, vs.ID, file, nil)

	page, err := client.VectorStores.Search(ctx, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("zebra migration")},
		option.WithHeader("Vendor-Beta", "assistants=v2"))
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].FileID != file || page.Data[0].Filename != "notes.txt" || len(page.Data[0].Content) != 1 ||
		!strings.Contains(page.Data[0].Content[0].Text, "zebra") || page.Data[0].Score <= 0 {
		t.Fatalf("openai-go with both headers read %+v", page.Data)
	}
	for header, want := range map[string]string{"Vendor-Beta": "spec", "OpenAI-Beta": "openai"} {
		status, body := gatewaytest.RawSearch(t, base, gatewaytest.ClientKey, vs.ID, header, `{"query":"zebra"}`)
		if dialect, findings := schemas.ValidateResponse("vector_stores.search", body); status != http.StatusOK || dialect != want || len(findings) > 0 {
			t.Fatalf("%s alone: %d %s %v\n%s", header, status, dialect, findings, body)
		}
	}

	_, err = client.VectorStores.Search(ctx, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("zebra")}, option.WithHeaderDel("OpenAI-Beta"))
	e := gatewaytest.AsAPIError(t, err)
	if e.StatusCode != http.StatusBadRequest || e.Code != "invalid_beta" || !strings.Contains(e.Message, "'Vendor-Beta: assistants=v2'") || !strings.Contains(e.Message, "'OpenAI-Beta: assistants=v2'") {
		t.Fatalf("no beta header: %d %q %q", e.StatusCode, e.Code, e.Message)
	}
}
