package modelgate_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelgate/modelgate/internal/testgateway"
)

// objectsProvider is a provider keeping objects of every kind in memory
// for one API key (the gateway's): a POST to a collection creates one, a
// GET retrieves or lists them (after and limit honoured), a DELETE
// answers deleted but keeps the object, so that only the gateway's own
// answer can tell that it is gone. A batch comes with an output file the
// provider made itself.
type objectsProvider struct {
	mu      sync.Mutex
	seq     int
	objects map[string]map[string]any
	order   []string
	served  int
}

var collectionPrefixes = map[string]string{"responses": "resp_", "files": "file-", "vector_stores": "vs_", "batches": "batch_", "conversations": "conv_"}

func (p *objectsProvider) create(collection string, fields map[string]any) map[string]any {
	p.seq++
	obj := map[string]any{"id": fmt.Sprintf("%s%d", collectionPrefixes[collection], p.seq), "object": strings.TrimSuffix(collection, "s"), "created_at": 1}
	for k, v := range fields {
		obj[k] = v
	}
	p.objects[obj["id"].(string)] = obj
	p.order = append(p.order, obj["id"].(string))
	return obj
}

func (p *objectsProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.served++
	segs := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/"), "/")
	collection := segs[0]
	write := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	switch {
	case r.Method == http.MethodPost && len(segs) == 1:
		body, _ := io.ReadAll(r.Body)
		fields := map[string]any{}
		if collection == "batches" {
			fields["output_file_id"] = p.create("files", nil)["id"]
		}
		obj := p.create(collection, fields)
		if strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			created, _ := json.Marshal(obj)
			fmt.Fprintf(w, "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":%s}\n\n", created)
			fmt.Fprintf(w, "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":1,\"response\":%s}\n\n", created)
			return
		}
		write(obj)
	case r.Method == http.MethodGet && len(segs) == 1:
		limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
		if err != nil {
			limit = 20
		}
		after := r.URL.Query().Get("after")
		data := []any{}
		more := false
		for _, id := range p.order {
			if after != "" {
				after = map[bool]string{true: "", false: after}[id == after]
				continue
			}
			if obj := p.objects[id]; strings.HasPrefix(id, collectionPrefixes[collection]) {
				if len(data) == limit {
					more = true
					break
				}
				data = append(data, obj)
			}
		}
		list := map[string]any{"object": "list", "data": data, "has_more": more, "first_id": nil, "last_id": nil}
		if len(data) > 0 {
			list["first_id"], list["last_id"] = data[0].(map[string]any)["id"], data[len(data)-1].(map[string]any)["id"]
		}
		write(list)
	case p.objects[segs[1]] == nil:
		w.WriteHeader(http.StatusNotFound)
		write(map[string]any{"error": map[string]any{"message": "provider: no such object", "type": "invalid_request_error", "param": nil, "code": nil}})
	case r.Method == http.MethodDelete && len(segs) == 2:
		write(map[string]any{"id": segs[1], "object": p.objects[segs[1]]["object"], "deleted": true})
	case len(segs) == 2:
		write(p.objects[segs[1]])
	case segs[2] == "content":
		io.WriteString(w, "file content")
	default: // a sub-collection: input items, items, vector store files
		write(map[string]any{"object": "list", "data": []any{}, "has_more": false, "first_id": nil, "last_id": nil})
	}
}

// TestProviderObjectsBelongToTheirOwner: two keys of two owners through
// one gateway to one provider (one provider key). Every object alice
// creates (responses, JSON and streamed; files; vector stores; batches
// and the output file the provider wrote for hers; conversations) is
// hers only: bob gets the 404 a missing object gets for every operation
// on it, by path or by a field of his request's body, and none of those
// requests reaches the provider; lists show each owner its own objects; a
// delete forgets the object.
func TestProviderObjectsBelongToTheirOwner(t *testing.T) {
	p := &objectsProvider{objects: map[string]map[string]any{}}
	provider := newFakeProvider(t, p.ServeHTTP)
	const aliceKey, bobKey = "sk-alice-key-00000001", "sk-bob-key-000000002"
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s {
			owner alice
		}
		key %s {
			owner bob
		}
		upstream provider {
			base_url %s/v1
			api_key %s
		}
		route * to provider
		route unknown to provider
	}`, aliceKey, bobKey, provider.URL, upstreamKey))
	as := func(key string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json", "OpenAI-Beta": "assistants=v2"}
	}
	alice, bob := as(aliceKey), as(bobKey)
	create := func(h map[string]string, path, body string) string {
		t.Helper()
		resp, _ := rawRequest(t, "POST", base+path, body, h)
		var obj struct{ ID string }
		if resp.StatusCode != 200 || json.Unmarshal(lastBody, &obj) != nil || obj.ID == "" {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, lastBody)
		}
		return obj.ID
	}
	upload := func(h map[string]string) string {
		t.Helper()
		const boundary = "b0undary"
		up := map[string]string{"Authorization": h["Authorization"], "Content-Type": "multipart/form-data; boundary=" + boundary}
		body := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n--" + boundary +
			"\r\nContent-Disposition: form-data; name=\"file\"; filename=\"in.jsonl\"\r\nContent-Type: application/octet-stream\r\n\r\n{}\r\n--" + boundary + "--\r\n"
		resp, _ := rawRequest(t, "POST", base+"/v1/files", body, up)
		var obj struct{ ID string }
		if resp.StatusCode != 200 || json.Unmarshal(lastBody, &obj) != nil {
			t.Fatalf("upload: %d %s", resp.StatusCode, lastBody)
		}
		return obj.ID
	}

	file := upload(alice)
	resp := create(alice, "/v1/responses", `{"model":"gpt-4o","input":"hi"}`)
	rawRequest(t, "POST", base+"/v1/responses", `{"model":"gpt-4o","input":"hi","stream":true}`, alice)
	_, streamed, _ := strings.Cut(string(lastBody), `"id":"`)
	streamed, _, _ = strings.Cut(streamed, `"`)
	if !strings.HasPrefix(streamed, "resp_") {
		t.Fatalf("streamed response: %s", lastBody)
	}
	vs := create(alice, "/v1/vector_stores", `{"name":"mine","file_ids":["`+file+`"]}`)
	batch := create(alice, "/v1/batches", `{"input_file_id":"`+file+`","endpoint":"/v1/chat/completions","completion_window":"24h"}`)
	conv := create(alice, "/v1/conversations", `{"items":[{"type":"message","role":"user","content":[{"type":"input_file","file_id":"`+file+`"}]}]}`)

	notFound := func(h map[string]string, method, path, body, kind, id, param string) {
		t.Helper()
		served := p.served
		resp, env := rawRequest(t, method, base+path, body, h)
		want := fmt.Sprintf("No %s found with id '%s'.", kind, id)
		if param == "previous_response_id" { // as the local store says it
			want = fmt.Sprintf("Previous response with id '%s' not found.", id)
		}
		if resp.StatusCode != 404 || env.Error.Message != want || env.Error.Type != "invalid_request_error" ||
			(param == "") != (env.Error.Param == nil) || (param != "" && *env.Error.Param != param) {
			t.Errorf("%s %s %s: %d %s, want 404 %q param %q", method, path, body, resp.StatusCode, lastBody, want, param)
		}
		if p.served != served {
			t.Errorf("%s %s reached the provider", method, path)
		}
	}
	found := func(h map[string]string, method, path, body string) {
		t.Helper()
		if resp, _ := rawRequest(t, method, base+path, body, h); resp.StatusCode != 200 {
			t.Errorf("%s %s: %d %s", method, path, resp.StatusCode, lastBody)
		}
	}
	paths := []struct{ method, path, body, kind, id string }{
		{"GET", "/v1/responses/" + resp, "", "response", resp},
		{"GET", "/v1/responses/" + streamed, "", "response", streamed},
		{"GET", "/v1/responses/" + resp + "/input_items", "", "response", resp},
		{"GET", "/v1/files/" + file, "", "file", file},
		{"GET", "/v1/files/" + file + "/content", "", "file", file},
		{"GET", "/v1/vector_stores/" + vs, "", "vector store", vs},
		{"POST", "/v1/vector_stores/" + vs, `{"name":"theirs"}`, "vector store", vs},
		{"GET", "/v1/vector_stores/" + vs + "/files", "", "vector store", vs},
		{"GET", "/v1/vector_stores/" + vs + "/file_batches/vsfb_1", "", "vector store", vs}, // a path passed through unknown
		{"GET", "/v1/batches/" + batch, "", "batch", batch},
		{"POST", "/v1/batches/" + batch + "/cancel", "", "batch", batch},
		{"GET", "/v1/conversations/" + conv, "", "conversation", conv},
		{"POST", "/v1/conversations/" + conv, `{"metadata":{"a":"b"}}`, "conversation", conv},
		{"GET", "/v1/conversations/" + conv + "/items", "", "conversation", conv},
		{"POST", "/v1/conversations/" + conv + "/items", `{"items":[{"type":"message","role":"user","content":"x"}]}`, "conversation", conv},
	}
	for _, c := range paths {
		notFound(bob, c.method, c.path, c.body, c.kind, c.id, "")
		found(alice, c.method, c.path, c.body)
	}
	bobVS := create(bob, "/v1/vector_stores", `{"name":"bob's"}`)
	bodies := []struct{ path, body, kind, id, param string }{
		{"/v1/responses", `{"model":"gpt-4o","input":"x","previous_response_id":"` + resp + `"}`, "response", resp, "previous_response_id"},
		{"/v1/responses", `{"model":"gpt-4o","input":"x","conversation":"` + conv + `"}`, "conversation", conv, "conversation"},
		{"/v1/responses", `{"model":"gpt-4o","input":"x","conversation":{"id":"` + conv + `"}}`, "conversation", conv, "conversation.id"},
		{"/v1/responses", `{"model":"gpt-4o","input":[{"role":"user","content":[{"type":"input_file","file_id":"` + file + `"}]}]}`, "file", file, "input[0].content[0].file_id"},
		{"/v1/responses", `{"model":"gpt-4o","input":"x","tools":[{"type":"file_search","vector_store_ids":["` + bobVS + `","` + vs + `"]}]}`, "vector store", vs, "tools[0].vector_store_ids[1]"},
		{"/v1/chat/completions", `{"model":"gpt-4o","messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"` + file + `"}}]}]}`, "file", file, "messages[0].content[0].file.file_id"},
		{"/v1/batches", `{"input_file_id":"` + file + `","endpoint":"/v1/chat/completions","completion_window":"24h"}`, "file", file, "input_file_id"},
		{"/v1/vector_stores", `{"file_ids":["` + file + `"]}`, "file", file, "file_ids[0]"},
		{"/v1/vector_stores/" + bobVS + "/files", `{"file_id":"` + file + `"}`, "file", file, "file_id"},
		{"/v1/conversations", `{"items":[{"type":"message","role":"user","content":[{"type":"input_file","file_id":"` + file + `"}]}]}`, "file", file, "items[0].content[0].file_id"},
	}
	for _, c := range bodies {
		notFound(bob, "POST", c.path, c.body, c.kind, c.id, c.param)
	}
	found(alice, "POST", "/v1/responses", `{"model":"gpt-4o","input":"x","previous_response_id":"`+resp+`"}`)
	found(alice, "POST", "/v1/responses", `{"model":"gpt-4o","input":"x","conversation":"`+conv+`"}`)

	// The provider's own output file of alice's batch is hers once she has
	// seen the batch; an object no key created through the gateway is
	// nobody's.
	var b struct {
		OutputFileID string `json:"output_file_id"`
	}
	found(alice, "GET", "/v1/batches/"+batch, "")
	json.Unmarshal(lastBody, &b)
	notFound(bob, "GET", "/v1/files/"+b.OutputFileID+"/content", "", "file", b.OutputFileID, "")
	found(alice, "GET", "/v1/files/"+b.OutputFileID+"/content", "")
	notFound(alice, "GET", "/v1/files/file-999", "", "file", "file-999", "")

	// Lists: each owner sees its own objects, a page at a time.
	bobFile := upload(bob)
	aliceFile := upload(alice)
	listIDs := func(h map[string]string, query string) ([]string, bool) {
		t.Helper()
		found(h, "GET", "/v1/files"+query, "")
		var page struct {
			Data    []struct{ ID string }
			LastID  *string `json:"last_id"`
			HasMore bool    `json:"has_more"`
		}
		json.Unmarshal(lastBody, &page)
		var ids []string
		for _, d := range page.Data {
			ids = append(ids, d.ID)
		}
		if len(ids) > 0 && (page.LastID == nil || *page.LastID != ids[len(ids)-1]) {
			t.Errorf("files%s: last_id %v of %v", query, page.LastID, ids)
		}
		return ids, page.HasMore
	}
	if ids, more := listIDs(bob, ""); fmt.Sprint(ids) != fmt.Sprint([]string{bobFile}) || more {
		t.Errorf("bob lists %v (more %v), want only %s", ids, more, bobFile)
	}
	var pages []string
	for after, more := "", true; more; {
		var ids []string
		ids, more = listIDs(alice, "?limit=1"+after)
		pages = append(pages, ids...)
		if len(ids) > 0 {
			after = "&after=" + ids[0]
		}
		if len(pages) > 5 {
			break
		}
	}
	if want := []string{file, b.OutputFileID, aliceFile}; fmt.Sprint(pages) != fmt.Sprint(want) {
		t.Errorf("alice's pages %v, want %v", pages, want)
	}
	found(bob, "GET", "/v1/batches", "")
	if strings.Contains(string(lastBody), batch) {
		t.Errorf("bob's batches list shows alice's: %s", lastBody)
	}

	// A delete forgets: the provider still answers, the gateway does not.
	for _, c := range []struct{ path, kind, id string }{{"/v1/responses/" + resp, "response", resp}, {"/v1/files/" + aliceFile, "file", aliceFile},
		{"/v1/vector_stores/" + vs, "vector store", vs}, {"/v1/conversations/" + conv, "conversation", conv}} {
		notFound(bob, "DELETE", c.path, "", c.kind, c.id, "")
		found(alice, "DELETE", c.path, "")
		notFound(alice, "GET", c.path, "", c.kind, c.id, "")
	}
}
