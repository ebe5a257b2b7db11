package local

import (
	"errors"
	"net/http"
	"strings"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
	"github.com/modelgate/modelgate/upstreams/local/vectorstores"
)

// The search of a vector store: the request read and checked, the
// search run (package vectorstores) and its hits answered in the
// configured shape.

// Search response dialects (see DESIGN: the spec's shape and the public
// API's).
const (
	dialectSpec   = "spec"
	dialectOpenAI = "openai"
	dialectAuto   = "auto"
)

// dialectFor picks the search response shape: the configured one, or by
// the beta header the client sent: the spec's for a client that sends
// Vendor-Beta (the spec's name) alone; the public API's for one that sends
// OpenAI-Beta (as the official SDKs always do), whatever else it sends.
func (l *Local) dialectFor(c *upstreams.Call) string {
	if l.SearchDialect == dialectSpec || l.SearchDialect == dialectOpenAI {
		return l.SearchDialect
	}
	if strings.EqualFold(c.BetaHeader, "Vendor-Beta") && len(c.Request.Header.Values("OpenAI-Beta")) == 0 {
		return dialectSpec
	}
	return dialectOpenAI
}

func (l *Local) searchVectorStore(vs store.VectorStoreStore, w http.ResponseWriter, c *upstreams.Call) error {
	var req vectorstores.SearchRequest
	if err := decodeBody(c.Body, &req); err != nil {
		return err
	}
	queries, err := req.Queries()
	if err != nil {
		return err
	}
	if err := req.CheckFilters(); err != nil {
		return err
	}
	if req.RewriteQuery {
		for i, q := range queries {
			queries[i] = vectorstores.NormalizeQuery(q)
		}
	}
	v, err := activeStore(vs, c)
	if err != nil {
		return err
	}
	hits, err := l.vectors.Search(c.Request.Context(), vs, c.Principal, v.ID, &req, queries)
	var fe *vectorstores.FileError
	if errors.As(err, &fe) {
		return &upstreams.Error{Status: http.StatusBadGateway, Type: upstreams.TypeServer, Code: "upstream_error",
			Message: "The query could not be embedded: " + fe.Message}
	}
	if err != nil {
		return err
	}
	l.touch(vs, c, v.ID)
	if l.dialectFor(c) == dialectSpec {
		data := make([]map[string]any, len(hits))
		for i, h := range hits {
			data[i] = map[string]any{"type": "vector_store.search_result", "score": h.Score, "content": h.Chunk.Text,
				"file_id": h.Chunk.FileID, "metadata": map[string]any{"filename": h.File.Filename, "chunk_index": h.Chunk.Index,
					"attributes": attributesOrNull(h.File)}}
		}
		upstreams.WriteJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
		return nil
	}
	data := make([]map[string]any, len(hits))
	for i, h := range hits {
		data[i] = map[string]any{"file_id": h.Chunk.FileID, "filename": h.File.Filename, "score": h.Score,
			"attributes": attributesOrNull(h.File), "content": []map[string]string{{"type": "text", "text": h.Chunk.Text}}}
	}
	upstreams.WriteJSON(w, http.StatusOK, map[string]any{"object": "vector_store.search_results.page", "search_query": queries,
		"data": data, "has_more": false, "next_page": nil})
	return nil
}
