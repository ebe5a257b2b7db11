package schemas

import (
	"testing"
)

// FuzzValidateRequest: no input panics, and every refusal has a message.
// The seed corpus runs as part of the ordinary test suite.
func FuzzValidateRequest(f *testing.F) {
	ops := []string{"chat.completions.create", "batches.create", "threads.create", "threads.update", "vector_stores.create",
		"vector_stores.update", "vector_stores.files.create", "vector_stores.search", "files.list"}
	for _, seed := range []string{
		chatWith(`,"stop":["a"],"logprobs":true,"top_logprobs":2,"tools":[{"type":"function","function":{"name":"f","parameters":{}}}]`),
		`{"query":["a","b"],"filters":{"type":"and","filters":[{"type":"eq","key":"k","value":1}]}}`,
		`{"input_file_id":"f","endpoint":"/v1/embeddings","completion_window":"24h"}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`,
		`{"file_id":"f","chunking_strategy":{"type":"static","static":{"max_chunk_size_tokens":100,"chunk_overlap_tokens":50}}}`,
		``, `null`, `[]`, `{`, `{"model":1e400}`, `{"messages":[null]}`, `{"metadata":{"":null}}`, "\x00", `{"a":"\ud800"}`,
	} {
		for i := range ops {
			f.Add(i, seed)
		}
	}
	f.Fuzz(func(t *testing.T, op int, body string) {
		if op < 0 {
			op = -op
		}
		_, v := ValidateRequest(ops[op%len(ops)], []byte(body))
		if v != nil && v.Message == "" {
			t.Fatalf("violation without a message for %q", body)
		}
	})
}
