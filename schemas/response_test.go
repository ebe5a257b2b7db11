package schemas

import (
	"strings"
	"testing"
)

func TestResponses(t *testing.T) {
	file := `{"id":"file-1","object":"file","bytes":3,"created_at":1,"filename":"a","purpose":"batch","status":"processed","expires_at":null}`
	tests := []struct {
		op, body, dialect string
		ok                bool
	}{
		{"files.retrieve", file, "", true},
		{"files.retrieve", strings.Replace(file, `"object":"file"`, `"object":"files"`, 1), "", false},
		{"files.list", `{"object":"list","data":[` + file + `],"first_id":"file-1","last_id":"file-1","has_more":false}`, "", true},
		{"files.list", `{"object":"list","data":[` + file + `]}`, "", false}, // has_more missing
		{"files.delete", `{"id":"file-1","object":"file","deleted":true}`, "", true},
		{"threads.retrieve", `{"id":"t","object":"thread","created_at":1,"metadata":{},"tool_resources":{}}`, "", true},
		{"threads.retrieve", `{"id":"t","object":"thread","created_at":1,"metadata":{}}`, "", false},
		{"batches.create", `{"id":"b","object":"batch","endpoint":"/v1/chat/completions","input_file_id":"f","completion_window":"24h","status":"validating","created_at":1,"request_counts":{"total":0,"completed":0,"failed":0}}`, "", true},
		{"batches.create", `{"id":"b","object":"batch","endpoint":"/v1/chat/completions","input_file_id":"f","completion_window":"24h","status":"running","created_at":1}`, "", false},
		{"chat.completions.create", `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`, "", true},
		{"chat.completions.create", `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"done"}]}`, "", false},
		{"vector_stores.search", `{"object":"list","data":[{"type":"vector_store.search_result","score":0.5,"content":"x","file_id":"f","metadata":{}}]}`, "spec", true},
		{"vector_stores.search", `{"object":"vector_store.search_results.page","search_query":["q"],"data":[{"file_id":"f","filename":"a","score":0.5,"attributes":{},"content":[{"type":"text","text":"x"}]}],"has_more":false,"next_page":null}`, "openai", true},
		{"vector_stores.search", `{"object":"vector_store.search_results.page","search_query":["q"],"data":[]}`, "", false},
		{"vector_stores.files.retrieve", `{"id":"file-1","object":"vector_store.file","vector_store_id":"vs","status":"done","created_at":1}`, "", false},
		{"models.list", `{"object":"list","data":[{"id":"m","object":"model","created":1,"owned_by":"x"}]}`, "", true},
	}
	for _, tc := range tests {
		dialect, findings := ValidateResponse(tc.op, []byte(tc.body))
		if (len(findings) == 0) != tc.ok || dialect != tc.dialect {
			t.Errorf("%s %s: dialect %q findings %v; want ok=%v dialect %q", tc.op, tc.body, dialect, findings, tc.ok, tc.dialect)
		}
	}
	if f := Validate("batch_input_line", []byte(`{"custom_id":"a","method":"GET","url":"/v1/chat/completions","body":{}}`)); len(f) == 0 || f[0].Path != "method" {
		t.Errorf("batch line with GET: %v", f)
	}
	if f := Validate("error", []byte(`{"error":{"message":"m","type":"t","param":null,"code":null}}`)); len(f) != 0 {
		t.Errorf("error envelope: %v", f)
	}
}

// TestResponseWithoutSchemaIsNotParsed: file content is any bytes; with no
// response schema there is nothing to report.
func TestResponseWithoutSchemaIsNotParsed(t *testing.T) {
	if _, findings := ValidateResponse("files.content", []byte("\x00binary, not JSON")); len(findings) != 0 {
		t.Fatalf("findings on file content: %v", findings)
	}
	if _, findings := ValidateResponse("files.retrieve", []byte("not JSON")); len(findings) == 0 {
		t.Fatal("a broken JSON reply with a schema passed")
	}
}

// TestResponsesStreamEndsOpenOnlyWithAnError: an error event may cut a
// Responses stream with an item open; the response's own last events
// (completed, incomplete, failed) may not.
func TestResponsesStreamEndsOpenOnlyWithAnError(t *testing.T) {
	const open = `event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"r","object":"response","created_at":1,"status":"in_progress","error":null,"model":"m","output":[],"incomplete_details":null,"instructions":null,"tools":[],"parallel_tool_calls":true,"metadata":{},"tool_choice":"auto","temperature":1,"top_p":1}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"message","id":"m1","status":"in_progress","role":"assistant","content":[]}}

`
	const failed = `{"id":"r","object":"response","created_at":1,"status":"failed","error":{"code":"server_error","message":"m"},"model":"m","output":[],"incomplete_details":null,"instructions":null,"tools":[],"parallel_tool_calls":true,"metadata":{},"tool_choice":"auto","temperature":1,"top_p":1}`
	for last, want := range map[string]string{
		`{"type":"error","sequence_number":2,"code":"upstream_stream_cut","message":"cut","param":null}`: "",
		`{"type":"response.failed","sequence_number":2,"response":` + failed + `}`:                       "output item 0 was never done",
	} {
		c := NewResponsesStreamChecker()
		c.Write([]byte(open + "data: " + last + "\n\n"))
		var got []string
		for _, f := range c.Close() {
			got = append(got, f.Message)
		}
		if strings.Join(got, "; ") != want {
			t.Errorf("%s: findings %q, want %q", last, got, want)
		}
	}
}
