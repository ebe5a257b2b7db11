package conformance

import (
	"fmt"
	"net/http"
	"strings"
)

// The echo family, driven by a table: per operation, how to create an
// object with some request fields set, and per field the value sent and
// the member of the reply that must repeat it.

// echoOp creates an object of one operation with fields set and returns
// the reply, which must succeed; what it creates is removed when the
// check ends.
type echoOp struct {
	op, area string
	requires []string
	create   func(t *T, fields map[string]any) *exchange
}

// echoField is one request field a reply repeats.
type echoField struct {
	field string
	value any
	// reply is the reply's member (dotted path); default field.
	reply string
	// holds compares, where the reply does not repeat the value as is;
	// it returns what the reply shows when it does not hold.
	holds func(sent any, reply map[string]any) (ok bool, seen string)
}

func postJSON(op, path string, beta bool) func(*T, map[string]any) *exchange {
	return func(t *T, fields map[string]any) *exchange {
		ex := t.do(request{op: op, method: http.MethodPost, path: path, json: fields, beta: beta})
		t.requireStatus(ex, http.StatusOK)
		if id, _ := t.object(ex)["id"].(string); id != "" && op != "chat.completions.create" && op != "embeddings.create" {
			t.cleanup(request{method: http.MethodDelete, path: path + "/" + id, beta: beta})
		}
		return ex
	}
}

// withModel adds the run's model unless fields set one.
func withModel(create func(*T, map[string]any) *exchange, extra func(t *T) map[string]any) func(*T, map[string]any) *exchange {
	return func(t *T, fields map[string]any) *exchange {
		body := extra(t)
		for k, v := range fields {
			body[k] = v
		}
		return create(t, body)
	}
}

var echoOps = []echoOp{
	{op: "chat.completions.create", area: AreaChat, create: withModel(postJSON("chat.completions.create", "/v1/chat/completions", false), func(t *T) map[string]any { return t.chatBody("Echo.") })},
	{op: "responses.create", area: AreaResponses, create: withModel(postJSON(responsesCreate, responsesPath, false), func(t *T) map[string]any { return t.responseBody("Echo.") })},
	{op: "embeddings.create", area: AreaEmbeddings, create: withModel(postJSON("embeddings.create", embeddingsPath, false), func(*T) map[string]any { return map[string]any{"model": embeddingModel, "input": "echo"} })},
	{op: "threads.create", area: AreaThreads, create: postJSON("threads.create", "/v1/threads", true)},
	{op: "vector_stores.create", area: AreaVectorStores, create: postJSON("vector_stores.create", "/v1/vector_stores", true)},
	{op: "conversations.create", area: AreaConversations, create: postJSON(conversationsCreateOp, conversationsPath, false)},
	{op: "files.create", area: AreaFiles, create: func(t *T, fields map[string]any) *exchange {
		name, _ := fields["filename"].(string)
		purpose, _ := fields["purpose"].(string)
		ex := t.uploadWith(name, purpose, []byte("echo\n"), fields["expires_after"])
		t.requireStatus(ex, http.StatusOK)
		t.cleanup(request{method: http.MethodDelete, path: "/v1/files/" + t.object(ex)["id"].(string)})
		return ex
	}},
	{op: "vector_stores.files.create", area: AreaVectorStores, requires: []string{AreaFiles}, create: func(t *T, fields map[string]any) *exchange {
		vs := t.newVectorStore()
		fields["file_id"] = t.upload("echo.txt", "assistants", []byte("An attached file."))
		ex := t.attach(vs, fields["file_id"].(string), fields)
		t.requireStatus(ex, http.StatusOK)
		return ex
	}},
	{op: "batches.create", area: AreaBatches, requires: []string{AreaFiles}, create: func(t *T, fields map[string]any) *exchange {
		if fields["input_file_id"] == nil {
			fields["input_file_id"] = t.batchInput(1)
		}
		ex := t.createBatch(fields["input_file_id"].(string), "/v1/chat/completions", "24h", fields)
		t.requireStatus(ex, http.StatusOK)
		return ex
	}},
}

var (
	echoMetadata = map[string]any{"suite": "conformance", "naïve": "café 文件"}
	echoTool     = map[string]any{"type": "function", "name": "get_weather", "description": "Current weather of a city.", "parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}}}
	echoChunking = map[string]any{"type": "static", "static": map[string]any{"max_chunk_size_tokens": 400, "chunk_overlap_tokens": 100}}
)

// modelEcho holds a reply's model to the one asked for: the same name,
// or a dated snapshot of it (name-2024-08-06).
func modelEcho(sent any, reply map[string]any) (bool, string) {
	got, _ := reply["model"].(string)
	s, _ := sent.(string)
	return got == s || strings.HasPrefix(got, s+"-"), fmt.Sprintf("model %q", got)
}

// expiresAt holds expires_at to the anchor's time plus expires_after's
// seconds (files) or days (vector stores).
func expiresAt(anchorField string, unit float64) func(any, map[string]any) (bool, string) {
	return func(sent any, reply map[string]any) (bool, string) {
		ea, _ := sent.(map[string]any)
		n, _ := ea["seconds"].(int)
		if d, ok := ea["days"].(int); ok {
			n = d
		}
		anchor, _ := reply[anchorField].(float64)
		at, _ := reply["expires_at"].(float64)
		return at == anchor+float64(n)*unit, fmt.Sprintf("expires_at %v, %s %v", reply["expires_at"], anchorField, reply[anchorField])
	}
}

var echoFields = map[string][]echoField{
	"chat.completions.create": {{field: "model", value: runModel, holds: modelEcho}},
	"responses.create": {{field: "model", value: runModel, holds: modelEcho}, {field: "instructions", value: "Answer in one short sentence."},
		{field: "metadata", value: echoMetadata}, {field: "temperature", value: 0.25}, {field: "top_p", value: 0.75},
		{field: "max_output_tokens", value: 64}, {field: "tools", value: []any{echoTool}}},
	"embeddings.create":    {{field: "model", value: embeddingModel, holds: modelEcho}},
	"threads.create":       {{field: "metadata", value: echoMetadata}},
	"vector_stores.create": {{field: "name", value: "echo - naïve café"}, {field: "metadata", value: echoMetadata}, {field: "expires_after", value: map[string]any{"anchor": "last_active_at", "days": 2}, holds: expiresAt("last_active_at", 86400)}},
	"conversations.create": {{field: "metadata", value: echoMetadata}},
	"files.create": {{field: "filename", value: "echo - naïve café.txt"}, {field: "purpose", value: "user_data"},
		{field: "expires_after", value: map[string]any{"anchor": "created_at", "seconds": 7200}, holds: expiresAt("created_at", 1)}},
	"vector_stores.files.create": {{field: "attributes", value: map[string]any{"author": "Jane", "year": 2024, "public": true}}, {field: "chunking_strategy", value: echoChunking}},
	"batches.create":             {{field: "endpoint", value: "/v1/chat/completions"}, {field: "completion_window", value: "24h"}, {field: "metadata", value: echoMetadata}},
}

// runModel stands for the run's model (Config.Model) in the table.
const runModel = "<the run's model>"

const specEcho = "A field a client sets is repeated by the object the reply returns, as it was sent (public API: the response object of each operation names the request fields it carries)."

// echoChecks makes one check per operation and field of the table.
func echoChecks() []Check {
	var out []Check
	for _, o := range echoOps {
		for _, f := range echoFields[o.op] {
			out = append(out, Check{ID: "invariant.echo." + o.op + "." + f.field, Area: o.area, Requires: o.requires,
				Spec: fmt.Sprintf("%s Here: %s of %s.", specEcho, f.field, o.op),
				run: func(t *T) {
					value := f.value
					if value == runModel {
						value = t.cfg.Model
					}
					fields := map[string]any{}
					if o.op == "files.create" {
						fields["filename"], fields["purpose"] = "echo.txt", "user_data"
					}
					fields[f.field] = value
					ex := o.create(t, fields)
					reply := t.object(ex)
					if f.holds != nil {
						ok, seen := f.holds(value, reply)
						t.expect(ok, ex, fmt.Sprintf("%s as sent (%s)", f.field, jsonText(value)), "%s", seen)
						return
					}
					path := f.reply
					if path == "" {
						path = f.field
					}
					got := dig(reply, path)
					t.expect(echoes(generic(value), got), ex, fmt.Sprintf("%s as sent: %s", path, jsonText(value)), "%s", jsonText(got))
				}})
		}
	}
	return out
}

// uploadWith sends files.create with expires_after when it is not nil.
func (t *T) uploadWith(name, purpose string, content []byte, expiresAfter any) *exchange {
	m, ok := expiresAfter.(map[string]any)
	if !ok {
		return t.uploadRaw(name, purpose, content)
	}
	return t.uploadFields(name, purpose, content, map[string]string{"expires_after[anchor]": fmt.Sprint(m["anchor"]), "expires_after[seconds]": fmt.Sprint(m["seconds"])})
}
