package conformance

import (
	"fmt"
	"net/http"
	"net/url"
)

// The aggregate family: every count or sum a reply states is recomputed
// from the parts it counts.

const (
	specUsageSum  = "usage: total_tokens is the prompt's (input's) tokens plus the completion's (output's); a detail (cached, reasoning tokens) is part of the count it details."
	specFileCount = "VectorStoreObject file_counts counts the store's files by status (total their sum); usage_bytes is the bytes the store's files use, more than 0 once a non-empty file completed."
	specPageAgg   = "A list page's first_id and last_id name its first and last items; has_more is true exactly when more items follow, and a page never holds more than limit."
	specReqCounts = "Batch request_counts: total is the requests of the input file, completed those with an output line, failed those with an error line."
)

var aggregateChecks = []Check{
	{ID: "invariant.aggregate.chat.completions.create.usage", Area: AreaChat, Spec: specUsageSum,
		run: func(t *T) {
			ex, _ := t.chat(t.chatBody("Count the rivers of a city.", "n", 2))
			t.expectUsageSum(ex, t.object(ex)["usage"], "prompt_tokens", "completion_tokens", "prompt_tokens_details.cached_tokens", "completion_tokens_details.reasoning_tokens")
		}},
	{ID: "invariant.aggregate.responses.create.usage", Area: AreaResponses, Spec: specUsageSum,
		run: func(t *T) {
			ex, _ := t.response(t.responseBody("Count the rivers of a city."))
			t.expectUsageSum(ex, t.object(ex)["usage"], "input_tokens", "output_tokens", "input_tokens_details.cached_tokens", "output_tokens_details.reasoning_tokens")
		}},
	{ID: "invariant.aggregate.embeddings.create.usage", Area: AreaEmbeddings, Spec: specUsageSum + " Embeddings have no completion: total_tokens equals prompt_tokens.",
		run: func(t *T) {
			ex, l := t.embed("input", []any{"one", "two words"})
			t.expect(l.Usage.TotalTokens == l.Usage.PromptTokens && l.Usage.PromptTokens > 0, ex, "total_tokens = prompt_tokens > 0", "%s", jsonText(l.Usage))
		}},
	{ID: "invariant.aggregate.vector_stores.file_counts", Area: AreaVectorStores, Requires: []string{AreaFiles}, Spec: specFileCount,
		run: func(t *T) {
			vs := t.newVectorStore()
			ids := t.attachAll(vs, []string{"The first file of the store.", "The second file, a little longer than the first."}, nil)
			t.expectFileCounts(vs, len(ids))
			ex := t.do(request{op: "vector_stores.files.delete", method: http.MethodDelete, path: "/v1/vector_stores/" + vs + "/files/" + ids[0], beta: true})
			t.requireStatus(ex, http.StatusOK)
			t.expectFileCounts(vs, len(ids)-1)
		}},
	{ID: "invariant.aggregate.batches.request_counts", Area: AreaBatches, Requires: []string{AreaFiles, AreaEmbeddings}, Spec: specReqCounts,
		run: func(t *T) {
			m := t.mixedBatch()
			want := requestCounts{Total: int64(len(mixedLines)), Completed: int64(len(m.output)), Failed: int64(len(m.errors))}
			t.expect(m.b.RequestCounts != nil && *m.b.RequestCounts == want, m.last, "request_counts "+jsonText(want)+" (the input's lines, the output's, the error file's)", "%s", jsonText(m.b.RequestCounts))
		}},
	{ID: "invariant.aggregate.vector_stores.files.list.page", Area: AreaVectorStores, Requires: []string{AreaFiles}, Spec: specPageAgg,
		run: func(t *T) {
			vs := t.newVectorStore()
			ids := t.attachAll(vs, []string{"one", "two", "three"}, nil)
			t.expectPages("vector_stores.files.list", "/v1/vector_stores/"+vs+"/files", true, ids)
		}},
	{ID: "invariant.aggregate.conversations.items.list.page", Area: AreaConversations, Spec: specPageAgg,
		run: func(t *T) {
			_, c := t.conversation(map[string]any{"items": userItems("one", "two", "three")})
			_, all := t.conversationItems(c.ID, url.Values{"limit": {"100"}})
			var ids []string
			for _, it := range all.Data {
				ids = append(ids, it.ID)
			}
			t.expectPages(conversationItemsListOp, conversationsPath+"/"+c.ID+"/items", false, ids)
		}},
}

// expectUsageSum holds a usage object: total = a + b, each detail at
// most the count it details.
func (t *T) expectUsageSum(ex *exchange, u any, a, b, detailA, detailB string) {
	n := func(p string) float64 { f, _ := dig(u, p).(float64); return f }
	total := n("total_tokens")
	t.expect(total == n(a)+n(b), ex, fmt.Sprintf("usage.total_tokens = %s + %s (%v)", a, b, n(a)+n(b)), "%v", total)
	t.expect(n(detailA) <= n(a), ex, fmt.Sprintf("usage.%s at most %s", detailA, a), "%v > %v", n(detailA), n(a))
	t.expect(n(detailB) <= n(b), ex, fmt.Sprintf("usage.%s at most %s", detailB, b), "%v > %v", n(detailB), n(b))
}

// expectFileCounts holds a vector store's file_counts to its listed
// files, and usage_bytes above 0 while a completed file is in it.
func (t *T) expectFileCounts(vs string, want int) {
	list := t.listAttached(vs, url.Values{"limit": {"100"}})
	t.requireStatus(list, http.StatusOK)
	byStatus := map[string]float64{}
	items, _ := t.object(list)["data"].([]any)
	for _, it := range items {
		s, _ := dig(it, "status").(string)
		byStatus[s]++
	}
	ex := t.get("vector_stores.retrieve", "/v1/vector_stores/"+vs, true)
	t.requireStatus(ex, http.StatusOK)
	doc := t.object(ex)
	counts, _ := doc["file_counts"].(map[string]any)
	seen := map[string]float64{}
	for k, v := range counts {
		seen[k], _ = v.(float64)
	}
	ok := seen["total"] == float64(len(items)) && len(items) == want
	for _, s := range []string{"in_progress", "completed", "failed", "cancelled"} {
		ok = ok && seen[s] == byStatus[s]
	}
	t.expect(ok, ex, fmt.Sprintf("file_counts of the %d listed files: %s", len(items), jsonText(byStatus)), "%s", jsonText(counts))
	if byStatus["completed"] > 0 {
		ub, _ := doc["usage_bytes"].(float64)
		t.expect(ub > 0, ex, "usage_bytes above 0 with a completed non-empty file", "%v", doc["usage_bytes"])
	}
}

// expectPages walks a list one item a page each way, holding first_id,
// last_id and has_more on every page (pageAll), and every id listed.
func (t *T) expectPages(op, path string, beta bool, ids []string) {
	for _, order := range []string{"asc", "desc"} {
		items := t.pageAll(op, path, url.Values{"limit": {"1"}, "order": {order}}, beta)
		t.expectListed(items, ids)
		if len(items) != len(ids) {
			t.fail(Evidence{Request: "GET " + path + " (paged, limit 1)", Expected: fmt.Sprintf("%d items walking order %s", len(ids), order), Seen: fmt.Sprint(len(items))})
		}
	}
}
