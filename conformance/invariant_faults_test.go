package conformance_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"github.com/modelgate/modelgate/conformance"
)

// invariantFaults each break one invariant of one family in an otherwise
// conforming target: only that family's check (and the earlier checks
// the catalogue lists with it, where they see it) may fail.

var (
	embeddingsArea    = []string{conformance.AreaEmbeddings}
	conversationsArea = []string{conformance.AreaConversations}
	mixedBatchAreas   = []string{conformance.AreaBatches, conformance.AreaFiles, conformance.AreaEmbeddings}
)

var invariantFaults = []fault{
	{name: "echo: Responses instructions dropped", areas: responsesArea, want: []string{"invariant.echo.responses.create.instructions"},
		mutate: onReplies(pathHas(http.MethodPost, "/v1/responses", ""), func(d map[string]any) {
			if d["instructions"] != nil {
				d["instructions"] = nil
			}
		})},
	{name: "round trip: conversation retrieve loses metadata", areas: conversationsArea, want: []string{"invariant.round-trip.conversations", "conversations.lifecycle"},
		mutate: onReplies(func(r *http.Request) bool {
			return r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/conversations/") && strings.Count(r.URL.Path, "/") == 3
		}, func(d map[string]any) { d["metadata"] = map[string]any{} })},
	{name: "aggregate: file_counts one short", areas: []string{conformance.AreaVectorStores, conformance.AreaFiles}, only: []string{"invariant.*", "vector_stores.*"}, want: []string{"invariant.aggregate.vector_stores.file_counts"},
		mutate: onReplies(func(r *http.Request) bool {
			return r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/vector_stores/") && strings.Count(r.URL.Path, "/") == 3
		}, func(d map[string]any) {
			if c, ok := d["file_counts"].(map[string]any); ok && c["completed"].(float64) > 0 {
				c["completed"] = c["completed"].(float64) - 1
			}
		})},
	{name: "stream = non-stream: streamed logprobs differ", areas: chatArea, want: []string{"invariant.stream-equals-non-stream.chat.completions.create.text"},
		mutate: streamsOnly(func(reply []byte) []byte {
			return regexp.MustCompile(`"logprob":-?[0-9.e-]+`).ReplaceAll(reply, []byte(`"logprob":-9.5`))
		})},
	// Not embeddings.limits: its 2,048-input replies would make the
	// fault's JSON rewriting the bulk of the run.
	{name: "batch = single: embeddings of several inputs swapped", areas: embeddingsArea, only: []string{"invariant.*", "embeddings.create", "embeddings.base64", "embeddings.dimensions"}, want: []string{"invariant.batch-equals-single.embeddings.create"},
		mutate: onReplies(pathHas(http.MethodPost, "/v1/embeddings", ""), func(d map[string]any) {
			if items, _ := d["data"].([]any); len(items) == 2 {
				a, b := items[0].(map[string]any), items[1].(map[string]any)
				a["embedding"], b["embedding"] = b["embedding"], a["embedding"]
			}
		})},
	{name: "parameter effect: tool_choice forces the first tool", areas: chatArea, want: []string{"invariant.parameter-effect.chat.completions.create.tool_choice"},
		rewrite: func(r *http.Request, body []byte) []byte {
			var req map[string]any
			if r.URL.Path != "/v1/chat/completions" || json.Unmarshal(body, &req) != nil {
				return body
			}
			tools, _ := req["tools"].([]any)
			if tc, ok := req["tool_choice"].(map[string]any); ok && len(tools) > 1 {
				tc["function"] = tools[0].(map[string]any)["function"].(map[string]any)["name"]
				tc["function"] = map[string]any{"name": tc["function"]}
				body, _ = json.Marshal(req)
			}
			return body
		}},
	{name: "induced failure: error line with status 200", areas: mixedBatchAreas, only: []string{"invariant.*", "batches.*", "files.*"}, want: []string{"invariant.induced-failure.batches.error-file"},
		mutate: func(_ *faultState, r *http.Request, _ []byte, status int, reply []byte) []byte {
			if status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/content") || !bytes.Contains(reply, []byte(`"too-wide"`)) {
				return reply
			}
			return regexp.MustCompile(`"status_code":4\d\d`).ReplaceAll(reply, []byte(`"status_code":200`))
		}},
}
