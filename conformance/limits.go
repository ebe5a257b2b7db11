package conformance

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

const specMetadata = "Common rule: a `metadata` field is an object of at most 16 key-value pairs; keys are strings of at most 64 characters; values are strings of at most 512 characters. Limits: any metadata, 16 pairs; key max 64 characters; value max 512 characters."

// metadataRows are the three boundaries of the metadata rule: the inside
// value is accepted, the outside one refused.
var metadataRows = []struct {
	name            string
	inside, outside func() map[string]any
}{
	{"pairs", func() map[string]any { return pairs(16) }, func() map[string]any { return pairs(17) }},
	{"key-length", func() map[string]any { return map[string]any{strings.Repeat("k", 64): "v"} }, func() map[string]any { return map[string]any{strings.Repeat("k", 65): "v"} }},
	{"value-length", func() map[string]any { return map[string]any{"k": strings.Repeat("v", 512)} }, func() map[string]any { return map[string]any{"k": strings.Repeat("v", 513)} }},
}

func pairs(n int) map[string]any {
	m := make(map[string]any, n)
	for i := range n {
		m["key"+strconv.Itoa(i)] = "value"
	}
	return m
}

// metadataTarget is an operation carrying metadata: send makes the
// request with the given metadata, registering the clean-up of what a
// success created; refused checks, after a refusal, that nothing was
// created (nil where the spec offers no way to look).
type metadataTarget struct {
	op, area, field string
	send            func(t *T, field string, md map[string]any) *exchange
	refused         func(t *T, ex *exchange)
}

var metadataTargets = []metadataTarget{
	{"threads.create", AreaThreads, "metadata", func(t *T, field string, md map[string]any) *exchange {
		return t.createThread(map[string]any{field: md})
	}, nil},
	{"threads.update", AreaThreads, "metadata", func(t *T, field string, md map[string]any) *exchange {
		id := t.newThread(map[string]any{})
		return t.do(request{op: "threads.update", method: http.MethodPost, path: "/v1/threads/" + id, json: map[string]any{field: md}, beta: true})
	}, nil},
	{"chat.completions.create", AreaChat, "metadata", func(t *T, field string, md map[string]any) *exchange {
		return t.do(request{op: "chat.completions.create", method: http.MethodPost, path: "/v1/chat/completions", json: t.chatBody("Hello", field, md)})
	}, nil},
	{"batches.create", AreaBatches, "metadata", func(t *T, field string, md map[string]any) *exchange {
		return t.createBatch(t.batchInput(2), "/v1/chat/completions", "24h", map[string]any{field: md})
	}, func(t *T, ex *exchange) { t.expectNoBatch(ex) }},
	{"vector_stores.files.create", AreaVectorStores, "attributes", func(t *T, field string, md map[string]any) *exchange {
		vs := t.newVectorStore()
		file := t.upload("attributes.txt", "assistants", []byte("A file to attach with attributes."))
		return t.attach(vs, file, map[string]any{field: md})
	}, func(t *T, ex *exchange) { t.expectNotAttached(ex) }},
}

// boundary holds one limit row: inside accepted with 200, outside refused
// with a 400 naming field (and, where refused is given, nothing created).
func (t *T) boundary(inside, outside *exchange, field string, refused func(*T, *exchange)) {
	t.expectStatus(inside, http.StatusOK)
	if t.expectParam(outside, field) && refused != nil {
		refused(t, outside)
	}
}

// chatRows are the chat rows of the Limits table: each field's inside
// values are accepted, its outside values refused.
var chatRows = []struct {
	id, spec, field string
	inside, outside []any
	fields          []any
}{
	{"stop", "Chat `stop`: up to 4 sequences.", "stop", []any{[]any{"a1", "b2", "c3", "d4"}}, []any{[]any{"a1", "b2", "c3", "d4", "e5"}}, nil},
	{"temperature", "Chat `temperature`: 0 to 2.", "temperature", []any{0, 2}, []any{-0.1, 2.1}, nil},
	{"presence-penalty", "Chat `presence_penalty`: -2.0 to 2.0.", "presence_penalty", []any{-2, 2}, []any{-2.1, 2.1}, nil},
	{"frequency-penalty", "Chat `frequency_penalty`: -2.0 to 2.0.", "frequency_penalty", []any{-2, 2}, []any{-2.1, 2.1}, nil},
	{"logit-bias", "Chat `logit_bias` values: -100 to 100.", "logit_bias", []any{map[string]any{"50256": -100, "1000": 100}}, []any{map[string]any{"50256": -101}, map[string]any{"1000": 101}}, nil},
	{"top-logprobs", "Chat `top_logprobs`: 0 to 20; requires `logprobs` true.", "top_logprobs", []any{0, 20}, []any{-1, 21}, []any{"logprobs", true}},
}

var limitChecks = func() []Check {
	var checks []Check
	for _, target := range metadataTargets {
		for _, row := range metadataRows {
			checks = append(checks, Check{ID: "limits.metadata." + row.name + "." + target.op, Area: AreaLimits, Requires: []string{target.area}, Spec: specMetadata,
				run: func(t *T) {
					t.boundary(target.send(t, target.field, row.inside()), target.send(t, target.field, row.outside()), target.field, target.refused)
				}})
		}
	}
	checks = append(checks, Check{ID: "limits.attributes.value-kinds.vector_stores.files.create", Area: AreaLimits, Requires: []string{AreaVectorStores},
		Spec: "Common rule: for the attributes of a vector store file, values may also be booleans or numbers.",
		run: func(t *T) {
			vs := t.newVectorStore()
			file := t.upload("kinds.txt", "assistants", []byte("A file with attributes of every kind."))
			t.expectStatus(t.attach(vs, file, map[string]any{"attributes": map[string]any{"s": "x", "b": true, "n": 2.5}}), http.StatusOK)
		}})
	for _, row := range chatRows {
		checks = append(checks, Check{ID: "limits.chat." + row.id, Area: AreaLimits, Requires: []string{AreaChat}, Spec: "Limits: " + row.spec,
			run: func(t *T) {
				send := func(v any) *exchange {
					body := t.chatBody("Hello", append([]any{row.field, v}, row.fields...)...)
					return t.do(request{op: "chat.completions.create", method: http.MethodPost, path: "/v1/chat/completions", json: body})
				}
				for _, v := range row.inside {
					t.expectStatus(send(v), http.StatusOK)
				}
				for _, v := range row.outside {
					t.expectParam(send(v), row.field)
				}
			}})
	}
	checks = append(checks,
		Check{ID: "limits.chat.store-images", Area: AreaLimits, Requires: []string{AreaChat}, Spec: "Limits: chat `store`: image inputs over 8 MB are dropped.",
			run: func(t *T) {
				t.skip("not observable through the operations of the spec: it concerns stored outputs, which no spec operation reads")
			}},
		Check{ID: "limits.vector_stores.search.max-num-results", Area: AreaLimits, Requires: []string{AreaVectorStores}, Spec: "Limits: vector store search `max_num_results` 1 to 50.",
			run: func(t *T) {
				vs := t.newVectorStore()
				for _, n := range []int{1, 50} {
					t.expectStatus(t.search(vs, map[string]any{"query": "anything", "max_num_results": n}), http.StatusOK)
				}
				for _, n := range []int{0, 51} {
					t.expectParam(t.search(vs, map[string]any{"query": "anything", "max_num_results": n}), "max_num_results")
				}
			}},
		Check{ID: "limits.vector_stores.files.chunking", Area: AreaLimits, Requires: []string{AreaVectorStores}, Spec: "Public API: a static chunking strategy has max_chunk_size_tokens 100 to 4096 and chunk_overlap_tokens at most half of it.",
			run: func(t *T) {
				vs := t.newVectorStore()
				static := func(size, overlap int) map[string]any {
					return map[string]any{"chunking_strategy": map[string]any{"type": "static", "static": map[string]any{"max_chunk_size_tokens": size, "chunk_overlap_tokens": overlap}}}
				}
				for i, c := range [][2]int{{100, 50}, {4096, 2048}} {
					file := t.upload(fmt.Sprintf("chunking-%d.txt", i), "assistants", []byte("A file chunked at a boundary."))
					t.expectStatus(t.attach(vs, file, static(c[0], c[1])), http.StatusOK)
				}
				for i, c := range [][2]int{{99, 0}, {4097, 0}, {800, 401}} {
					file := t.upload(fmt.Sprintf("chunking-out-%d.txt", i), "assistants", []byte("A file chunked past a boundary."))
					ex := t.attach(vs, file, static(c[0], c[1]))
					if t.expectParam(ex, "chunking_strategy") {
						t.expectNotAttached(ex)
					}
				}
			}},
		Check{ID: "limits.vector_stores.files.list.limit", Area: AreaLimits, Requires: []string{AreaVectorStores}, Spec: "Limits: list vector store files `limit` 1 to 100, default 20.",
			run: func(t *T) {
				vs := t.newVectorStore()
				for _, n := range []int{1, 100} {
					t.expectStatus(t.listAttached(vs, url.Values{"limit": {strconv.Itoa(n)}}), http.StatusOK)
				}
				for _, n := range []int{0, 101} {
					t.expectParam(t.listAttached(vs, url.Values{"limit": {strconv.Itoa(n)}}), "limit")
				}
			}},
		Check{ID: "limits.batches.completion-window", Area: AreaLimits, Requires: []string{AreaBatches}, Spec: "Limits: batch completion window only `24h`.",
			run: func(t *T) {
				input := t.batchInput(1)
				t.boundary(t.createBatch(input, "/v1/chat/completions", "24h", nil), t.createBatch(t.batchInput(1), "/v1/chat/completions", "48h", nil), "completion_window", (*T).expectNoBatch)
			}},
		Check{ID: "limits.batches.endpoint", Area: AreaLimits, Requires: []string{AreaBatches}, Spec: "Create batch: `endpoint` is one of /v1/responses, /v1/chat/completions, /v1/embeddings, /v1/completions, /v1/moderations, /v1/images/generations, /v1/images/edits.",
			run: func(t *T) {
				t.boundary(t.createBatch(t.batchInput(1), "/v1/chat/completions", "24h", nil), t.createBatch(t.batchInput(1), "/v1/threads", "24h", nil), "endpoint", (*T).expectNoBatch)
			}},
		Check{ID: "limits.batches.embedding-inputs", Area: AreaLimits, Requires: []string{AreaBatches}, Spec: "Limits: batch with endpoint /v1/embeddings, at most 50,000 embedding inputs.",
			run: func(t *T) {
				inside := t.createBatch(t.embeddingInput(50_000), "/v1/embeddings", "24h", nil)
				t.expectStatus(inside, http.StatusOK)
				t.expectBatchRefused(t.createBatch(t.embeddingInput(50_001), "/v1/embeddings", "24h", nil))
			}},
		Check{ID: "limits.batches.input-requests", Area: AreaLimits, Requires: []string{AreaBatches}, Spec: "Limits: batch input file up to 50,000 requests.",
			run: func(t *T) {
				if !t.cfg.Heavy {
					t.skip("heavy probe (two files of 50,000 and 50,001 requests): run with --heavy")
				}
				t.expectStatus(t.createBatch(t.batchInput(50_000), "/v1/chat/completions", "24h", nil), http.StatusOK)
				t.expectBatchRefused(t.createBatch(t.batchInput(50_001), "/v1/chat/completions", "24h", nil))
			}},
	)
	return checks
}()

// embeddingInput uploads a batch file of /v1/embeddings requests with n
// inputs in all, at most 2,000 a line.
func (t *T) embeddingInput(n int) string {
	var b strings.Builder
	for line := 0; n > 0; line++ {
		k := min(n, 2000)
		n -= k
		fmt.Fprintf(&b, `{"custom_id":"e%d","method":"POST","url":"/v1/embeddings","body":{"model":"text-embedding-3-small","input":[%s"x"]}}`+"\n", line, strings.Repeat(`"x",`, k-1))
	}
	return t.upload("embeddings.jsonl", "batch", []byte(b.String()))
}
