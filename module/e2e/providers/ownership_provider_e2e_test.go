package providers

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestProviderObjectsBelongToTheirOwner: two keys of two owners through
// one gateway to one provider (one provider key). Every object alice
// creates (responses, JSON and streamed; files; vector stores; batches
// and the output file the provider wrote for hers; conversations) is
// hers only: bob gets the 404 a missing object gets for every operation
// on it, by path or by a field of his request's body, and none of those
// requests reaches the provider; lists show each owner its own objects; a
// delete forgets the object.
func TestProviderObjectsBelongToTheirOwner(t *testing.T) {
	p := &gatewaytest.ObjectsProvider{Objects: map[string]map[string]any{}}
	provider := gatewaytest.NewFakeProvider(t, p.ServeHTTP)
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
	}`, aliceKey, bobKey, provider.URL, gatewaytest.UpstreamKey))
	as := func(key string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json", "OpenAI-Beta": "assistants=v2"}
	}
	alice, bob := as(aliceKey), as(bobKey)
	create := func(h map[string]string, path, body string) string {
		t.Helper()
		resp, _ := gatewaytest.RawRequest(t, "POST", base+path, body, h)
		var obj struct{ ID string }
		if resp.StatusCode != 200 || json.Unmarshal(gatewaytest.LastBody, &obj) != nil || obj.ID == "" {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, gatewaytest.LastBody)
		}
		return obj.ID
	}
	upload := func(h map[string]string) string {
		t.Helper()
		const boundary = "b0undary"
		up := map[string]string{"Authorization": h["Authorization"], "Content-Type": "multipart/form-data; boundary=" + boundary}
		body := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n--" + boundary +
			"\r\nContent-Disposition: form-data; name=\"file\"; filename=\"in.jsonl\"\r\nContent-Type: application/octet-stream\r\n\r\n{}\r\n--" + boundary + "--\r\n"
		resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/files", body, up)
		var obj struct{ ID string }
		if resp.StatusCode != 200 || json.Unmarshal(gatewaytest.LastBody, &obj) != nil {
			t.Fatalf("upload: %d %s", resp.StatusCode, gatewaytest.LastBody)
		}
		return obj.ID
	}

	file := upload(alice)
	resp := create(alice, "/v1/responses", `{"model":"gpt-4o","input":"hi"}`)
	gatewaytest.RawRequest(t, "POST", base+"/v1/responses", `{"model":"gpt-4o","input":"hi","stream":true}`, alice)
	_, streamed, _ := strings.Cut(string(gatewaytest.LastBody), `"id":"`)
	streamed, _, _ = strings.Cut(streamed, `"`)
	if !strings.HasPrefix(streamed, "resp_") {
		t.Fatalf("streamed response: %s", gatewaytest.LastBody)
	}
	vs := create(alice, "/v1/vector_stores", `{"name":"mine","file_ids":["`+file+`"]}`)
	batch := create(alice, "/v1/batches", `{"input_file_id":"`+file+`","endpoint":"/v1/chat/completions","completion_window":"24h"}`)
	conv := create(alice, "/v1/conversations", `{"items":[{"type":"message","role":"user","content":[{"type":"input_file","file_id":"`+file+`"}]}]}`)

	notFound := func(h map[string]string, method, path, body, kind, id, param string) {
		t.Helper()
		served := p.Served
		resp, env := gatewaytest.RawRequest(t, method, base+path, body, h)
		want := fmt.Sprintf("No %s found with id '%s'.", kind, id)
		if param == "previous_response_id" { // as the local store says it
			want = fmt.Sprintf("Previous response with id '%s' not found.", id)
		}
		if resp.StatusCode != 404 || env.Error.Message != want || env.Error.Type != "invalid_request_error" ||
			(param == "") != (env.Error.Param == nil) || (param != "" && *env.Error.Param != param) {
			t.Errorf("%s %s %s: %d %s, want 404 %q param %q", method, path, body, resp.StatusCode, gatewaytest.LastBody, want, param)
		}
		if p.Served != served {
			t.Errorf("%s %s reached the provider", method, path)
		}
	}
	found := func(h map[string]string, method, path, body string) {
		t.Helper()
		if resp, _ := gatewaytest.RawRequest(t, method, base+path, body, h); resp.StatusCode != 200 {
			t.Errorf("%s %s: %d %s", method, path, resp.StatusCode, gatewaytest.LastBody)
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
	json.Unmarshal(gatewaytest.LastBody, &b)
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
		json.Unmarshal(gatewaytest.LastBody, &page)
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
	if strings.Contains(string(gatewaytest.LastBody), batch) {
		t.Errorf("bob's batches list shows alice's: %s", gatewaytest.LastBody)
	}

	// A delete forgets: the provider still answers, the gateway does not.
	for _, c := range []struct{ path, kind, id string }{{"/v1/responses/" + resp, "response", resp}, {"/v1/files/" + aliceFile, "file", aliceFile},
		{"/v1/vector_stores/" + vs, "vector store", vs}, {"/v1/conversations/" + conv, "conversation", conv}} {
		notFound(bob, "DELETE", c.path, "", c.kind, c.id, "")
		found(alice, "DELETE", c.path, "")
		notFound(alice, "GET", c.path, "", c.kind, c.id, "")
	}
}
