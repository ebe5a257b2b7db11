package responses

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// TestConversationLockedIs409: an append to a conversation whose lease
// another append holds, and renews, waits for it as long as a lease lasts
// (30 s by the store's clock, which the test drives), then is answered
// 409 conversation_locked with Retry-After, which clients and SDKs retry;
// once the lease is given back the same append passes and its item is
// listed.
func TestConversationLockedIs409(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Now().Unix())
	saved := store.Now
	store.Now = clock.Load
	t.Cleanup(func() { store.Now = saved })
	dir := t.TempDir()
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		upstream local local {
			data_dir %s
		}
	}`, gatewaytest.ClientKey, dir))
	post := func(path, body string) (*http.Response, map[string]any) {
		req, err := http.NewRequest("POST", base+path, strings.NewReader(body))
		if err != nil {
			t.Error(err)
			return nil, nil
		}
		for k, v := range gatewaytest.ChatHeaders {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return nil, nil
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Error(err)
		}
		return resp, out
	}
	resp, conv := post("/v1/conversations", `{}`)
	if resp == nil || resp.StatusCode != 200 {
		t.Fatalf("creating a conversation: %v", conv)
	}
	id, _ := conv["id"].(string)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "modelgate.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lease := func(token string, until int64) {
		if _, err := db.Exec(`UPDATE conversations SET append_lease = ?, appending_until = ? WHERE id = ?`, token, until, id); err != nil {
			t.Fatal(err)
		}
	}
	// Another append holds the lease, renewed well past the wait.
	lease("another", clock.Load()+1000)
	items := `{"items":[{"type":"message","role":"user","content":"hello"}]}`
	type answer struct {
		resp *http.Response
		body map[string]any
	}
	done := make(chan answer, 1)
	go func() {
		resp, body := post("/v1/conversations/"+id+"/items", items)
		done <- answer{resp, body}
	}()
	var got answer
	for i := 0; got.resp == nil; i++ {
		if i == 20 { // 620 s of the store's clock, the lease 1,000
			t.Fatal("the append still waits")
		}
		select {
		case got = <-done:
		case <-time.After(100 * time.Millisecond):
			clock.Add(31)
		}
	}
	e, _ := got.body["error"].(map[string]any)
	if got.resp.StatusCode != http.StatusConflict || e["code"] != "conversation_locked" || e["type"] != "invalid_request_error" ||
		e["param"] != nil || !strings.Contains(fmt.Sprint(e["message"]), "Another request is adding items") || got.resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("an append waiting for a renewed lease: %d %v Retry-After %q", got.resp.StatusCode, got.body, got.resp.Header.Get("Retry-After"))
	}
	lease("", 0)
	if resp, body := post("/v1/conversations/"+id+"/items", items); resp == nil || resp.StatusCode != 200 {
		t.Fatalf("the append once the lease is given back: %v", body)
	}
	req, _ := http.NewRequest("GET", base+"/v1/conversations/"+id+"/items", nil)
	for k, v := range gatewaytest.ChatHeaders {
		req.Header.Set(k, v)
	}
	listed, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer listed.Body.Close()
	var page struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(listed.Body).Decode(&page); err != nil || len(page.Data) != 1 {
		t.Fatalf("listing: %v, %d items", err, len(page.Data))
	}
}
