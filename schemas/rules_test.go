package schemas

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

func pairs(n, keyLen, valLen int) string {
	var b []string
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("k%0*d", max(keyLen-1, 1), i)
		b = append(b, fmt.Sprintf("%q:%q", k[:max(keyLen, len(fmt.Sprint(i))+1)], strings.Repeat("v", valLen)))
	}
	return "{" + strings.Join(b, ",") + "}"
}

const msgs = `"messages":[{"role":"user","content":"hi"}]`

func chatWith(extra string) string {
	return `{"model":"m",` + msgs + extra + `}`
}

// TestLimitsAtTheirBoundaries: for every rule, the largest (or smallest)
// allowed value passes and the next one is refused with the exact param.
func TestLimitsAtTheirBoundaries(t *testing.T) {
	tests := []struct {
		name, op, body, param string // param "" means accepted
	}{
		// Metadata rule (any metadata): 16 pairs, key 64, value 512.
		{"metadata 16 pairs", "chat.completions.create", chatWith(`,"metadata":` + pairs(16, 3, 1)), ""},
		{"metadata 17 pairs", "chat.completions.create", chatWith(`,"metadata":` + pairs(17, 3, 1)), "metadata"},
		{"metadata key 64", "threads.create", `{"metadata":{"` + strings.Repeat("k", 64) + `":"v"}}`, ""},
		{"metadata key 65", "threads.create", `{"metadata":{"` + strings.Repeat("k", 65) + `":"v"}}`, "metadata"},
		{"metadata value 512", "batches.create", `{"input_file_id":"f","endpoint":"/v1/chat/completions","completion_window":"24h","metadata":{"k":"` + strings.Repeat("v", 512) + `"}}`, ""},
		{"metadata value 513", "batches.create", `{"input_file_id":"f","endpoint":"/v1/chat/completions","completion_window":"24h","metadata":{"k":"` + strings.Repeat("v", 513) + `"}}`, "metadata.k"},
		{"metadata value not a string", "vector_stores.create", `{"metadata":{"k":1}}`, "metadata.k"},
		{"thread message metadata 17 pairs", "threads.create", `{"messages":[{"role":"user","content":"x","metadata":` + pairs(17, 3, 1) + `}]}`, "messages[0].metadata"},
		// Attributes: same rule, booleans and numbers allowed.
		{"attributes bool and number", "vector_stores.files.create", `{"file_id":"f","attributes":{"a":true,"b":1.5,"c":"x"}}`, ""},
		{"attributes 17 pairs", "vector_stores.files.create", `{"file_id":"f","attributes":` + pairs(17, 3, 1) + `}`, "attributes"},
		{"attributes value 513", "vector_stores.files.create", `{"file_id":"f","attributes":{"a":"` + strings.Repeat("v", 513) + `"}}`, "attributes.a"},
		{"attributes object value", "vector_stores.files.create", `{"file_id":"f","attributes":{"a":{}}}`, "attributes.a"},
		// Batches.
		{"batch window 24h", "batches.create", `{"input_file_id":"f","endpoint":"/v1/embeddings","completion_window":"24h"}`, ""},
		{"batch window 48h", "batches.create", `{"input_file_id":"f","endpoint":"/v1/embeddings","completion_window":"48h"}`, "completion_window"},
		{"batch endpoint outside enum", "batches.create", `{"input_file_id":"f","endpoint":"/v1/files","completion_window":"24h"}`, "endpoint"},
		{"batch needs input file", "batches.create", `{"endpoint":"/v1/embeddings","completion_window":"24h"}`, "input_file_id"},
		{"batch output expiry 3600", "batches.create", `{"input_file_id":"f","endpoint":"/v1/embeddings","completion_window":"24h","output_expires_after":{"anchor":"created_at","seconds":3600}}`, ""},
		{"batch output expiry 3599", "batches.create", `{"input_file_id":"f","endpoint":"/v1/embeddings","completion_window":"24h","output_expires_after":{"anchor":"created_at","seconds":3599}}`, "output_expires_after.seconds"},
		{"batch output expiry 2592001", "batches.create", `{"input_file_id":"f","endpoint":"/v1/embeddings","completion_window":"24h","output_expires_after":{"anchor":"created_at","seconds":2592001}}`, "output_expires_after.seconds"},
		// Search.
		{"max_num_results 1", "vector_stores.search", `{"query":"q","max_num_results":1}`, ""},
		{"max_num_results 50", "vector_stores.search", `{"query":"q","max_num_results":50}`, ""},
		{"max_num_results 0", "vector_stores.search", `{"query":"q","max_num_results":0}`, "max_num_results"},
		{"max_num_results 51", "vector_stores.search", `{"query":"q","max_num_results":51}`, "max_num_results"},
		{"multi-query", "vector_stores.search", `{"query":["a","b"]}`, ""},
		{"query required", "vector_stores.search", `{}`, "query"},
		{"score_threshold 1.01", "vector_stores.search", `{"query":"q","ranking_options":{"score_threshold":1.01}}`, "ranking_options.score_threshold"},
		{"nested filters", "vector_stores.search", `{"query":"q","filters":{"type":"and","filters":[{"type":"eq","key":"a","value":1},{"type":"or","filters":[{"type":"in","key":"b","value":["x"]}]}]}}`, ""},
		{"bad filter operator", "vector_stores.search", `{"query":"q","filters":{"type":"like","key":"a","value":1}}`, "filters.type"},
		// Chat.
		{"stop 4", "chat.completions.create", chatWith(`,"stop":["a","b","c","d"]`), ""},
		{"stop 5", "chat.completions.create", chatWith(`,"stop":["a","b","c","d","e"]`), "stop"},
		{"stop string", "chat.completions.create", chatWith(`,"stop":"x"`), ""},
		{"temperature 2", "chat.completions.create", chatWith(`,"temperature":2`), ""},
		{"temperature 2.0001", "chat.completions.create", chatWith(`,"temperature":2.0001`), "temperature"},
		{"temperature -0.1", "chat.completions.create", chatWith(`,"temperature":-0.1`), "temperature"},
		{"presence_penalty -2", "chat.completions.create", chatWith(`,"presence_penalty":-2`), ""},
		{"presence_penalty -2.01", "chat.completions.create", chatWith(`,"presence_penalty":-2.01`), "presence_penalty"},
		{"frequency_penalty 2", "chat.completions.create", chatWith(`,"frequency_penalty":2`), ""},
		{"frequency_penalty 2.5", "chat.completions.create", chatWith(`,"frequency_penalty":2.5`), "frequency_penalty"},
		{"logit_bias 100", "chat.completions.create", chatWith(`,"logit_bias":{"1234":100,"5":-100}`), ""},
		{"logit_bias 101", "chat.completions.create", chatWith(`,"logit_bias":{"1234":101}`), "logit_bias.1234"},
		{"logit_bias -101", "chat.completions.create", chatWith(`,"logit_bias":{"1234":-101}`), "logit_bias.1234"},
		{"top_logprobs 20", "chat.completions.create", chatWith(`,"logprobs":true,"top_logprobs":20`), ""},
		{"top_logprobs 21", "chat.completions.create", chatWith(`,"logprobs":true,"top_logprobs":21`), "top_logprobs"},
		{"top_logprobs without logprobs", "chat.completions.create", chatWith(`,"top_logprobs":2`), "top_logprobs"},
		{"n 1", "chat.completions.create", chatWith(`,"n":1`), ""},
		{"n 0", "chat.completions.create", chatWith(`,"n":0`), "n"},
		{"reasoning_effort xhigh", "chat.completions.create", chatWith(`,"reasoning_effort":"xhigh"`), ""},
		{"reasoning_effort extreme", "chat.completions.create", chatWith(`,"reasoning_effort":"extreme"`), "reasoning_effort"},
		{"model required", "chat.completions.create", `{` + msgs + `}`, "model"},
		{"messages empty", "chat.completions.create", `{"model":"m","messages":[]}`, "messages"},
		{"bad role", "chat.completions.create", `{"model":"m","messages":[{"role":"robot","content":"x"}]}`, "messages[0].role"},
		{"tool message needs tool_call_id", "chat.completions.create", `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"tool","content":"r"}]}`, "messages[1].tool_call_id"},
		{"tool message with tool_call_id", "chat.completions.create", `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"tool","content":"r","tool_call_id":"call_1"}]}`, ""},
		{"image part", "chat.completions.create", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x"},{"type":"image_url","image_url":{"url":"data:,"}}]}]}`, ""},
		{"tool_choice named", "chat.completions.create", chatWith(`,"tool_choice":{"type":"function","function":{"name":"f"}}`), ""},
		{"tool_choice bad string", "chat.completions.create", chatWith(`,"tool_choice":"sometimes"`), "tool_choice"},
		{"tool without name", "chat.completions.create", chatWith(`,"tools":[{"type":"function","function":{}}]`), "tools[0].function.name"},
		{"json_schema needs name", "chat.completions.create", chatWith(`,"response_format":{"type":"json_schema","json_schema":{"schema":{}}}`), "response_format.json_schema.name"},
		{"unknown fields pass", "chat.completions.create", chatWith(`,"modalities":["text"],"web_search_options":{},"prediction":{"type":"content","content":"x"}`), ""},
		// Chunking.
		{"static 100..4096 overlap half", "vector_stores.files.create", `{"file_id":"f","chunking_strategy":{"type":"static","static":{"max_chunk_size_tokens":4096,"chunk_overlap_tokens":2048}}}`, ""},
		{"static 4097", "vector_stores.files.create", `{"file_id":"f","chunking_strategy":{"type":"static","static":{"max_chunk_size_tokens":4097,"chunk_overlap_tokens":0}}}`, "chunking_strategy.static.max_chunk_size_tokens"},
		{"static 99", "vector_stores.files.create", `{"file_id":"f","chunking_strategy":{"type":"static","static":{"max_chunk_size_tokens":99,"chunk_overlap_tokens":0}}}`, "chunking_strategy.static.max_chunk_size_tokens"},
		{"static overlap over half", "vector_stores.files.create", `{"file_id":"f","chunking_strategy":{"type":"static","static":{"max_chunk_size_tokens":400,"chunk_overlap_tokens":201}}}`, "chunking_strategy.static.chunk_overlap_tokens"},
		// Threads.
		{"thread message role", "threads.create", `{"messages":[{"role":"system","content":"x"}]}`, "messages[0].role"},
		{"empty body is an empty thread", "threads.create", ``, ""},
		{"not an object", "threads.create", `[1]`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, v := ValidateRequest(tc.op, []byte(tc.body))
			switch {
			case tc.name == "not an object":
				if v == nil || v.Param != "" {
					t.Fatalf("want a body-level violation, got %+v", v)
				}
			case tc.param == "" && v != nil:
				t.Fatalf("refused: %+v", v)
			case tc.param != "" && v == nil:
				t.Fatalf("accepted; want a violation of %s", tc.param)
			case tc.param != "" && (v.Param != tc.param || !strings.HasPrefix(v.Message, tc.param)):
				t.Fatalf("violation %+v; want param %s", v, tc.param)
			}
		})
	}
}

func TestMessagesSayTheRule(t *testing.T) {
	for body, want := range map[string]string{
		chatWith(`,"metadata":` + pairs(17, 3, 1)):             "metadata must have at most 16 pairs",
		`{"query":"q","max_num_results":51}`:                   "max_num_results must be at most 50",
		chatWith(`,"top_logprobs":3`):                          "top_logprobs requires logprobs to be true",
		`{"metadata":{"` + strings.Repeat("k", 65) + `":"v"}}`: "metadata keys must be at most 64 characters",
	} {
		op := "chat.completions.create"
		if strings.Contains(body, "max_num_results") {
			op = "vector_stores.search"
		} else if !strings.Contains(body, "messages") {
			op = "threads.create"
		}
		if _, v := ValidateRequest(op, []byte(body)); v == nil || v.Message != want {
			t.Errorf("%s: message %+v, want %q", op, v, want)
		}
	}
	_, v := ValidateRequest("batches.create", []byte(`{"input_file_id":"f","endpoint":"/v1/embeddings","completion_window":"1h"}`))
	if v == nil || v.Message != `completion_window must be "24h"` {
		t.Errorf("completion_window message %+v", v)
	}
}

func TestQueryLimits(t *testing.T) {
	for _, tc := range []struct {
		op, query, param string
	}{
		{"vector_stores.files.list", "limit=1", ""},
		{"vector_stores.files.list", "limit=100&order=asc&filter=completed", ""},
		{"vector_stores.files.list", "limit=0", "limit"},
		{"vector_stores.files.list", "limit=101", "limit"},
		{"vector_stores.files.list", "limit=ten", "limit"},
		{"vector_stores.files.list", "order=up", "order"},
		{"vector_stores.files.list", "filter=done", "filter"},
		{"batches.list", "limit=100", ""},
		{"batches.list", "limit=101", "limit"},
		{"files.list", "limit=10000", ""},
		{"files.list", "limit=10001", "limit"},
	} {
		q, _ := url.ParseQuery(tc.query)
		v := ValidateQuery(tc.op, q)
		if (tc.param == "") != (v == nil) || (v != nil && v.Param != tc.param) {
			t.Errorf("%s?%s: %+v, want param %q", tc.op, tc.query, v, tc.param)
		}
	}
}
