package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// idleDispatcher is a gateway that is never asked for anything.
type idleDispatcher struct {
	// Dispatcher (nil) stands for the methods the tests do not call.
	upstreams.Dispatcher
}

func (idleDispatcher) Dispatch(context.Context, string, upstreams.Principal, []byte) (*upstreams.Reply, error) {
	return nil, errors.New("nothing is dispatched in this test")
}

func (idleDispatcher) BodyLimit() int64 { return 64 << 20 }

// callLocal runs one operation on l as alice and returns the reply.
func callLocal(t *testing.T, l *Local, op, method, target string, params map[string]string, body io.Reader, contentType string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, body)
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	call := &upstreams.Call{Operation: op, Request: r, Params: params, Principal: upstreams.Principal{Owner: "alice", KeyName: "k"}}
	if err := l.ServeCall(rec, call); err != nil {
		var apiErr *upstreams.Error
		if !errors.As(err, &apiErr) {
			t.Fatalf("%s: %v", op, err)
		}
		upstreams.WriteError(rec, apiErr)
	}
	return rec
}

// sweptSoon waits, a bounded number of times, for the first sweep (which
// runs as the work starts) to have made done true.
func sweptSoon(done func() bool) bool {
	for range 2000 {
		if done() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// TestExpiredFilesThroughTheAPI: a file uploaded with expires_after gets
// expires_at = created_at + seconds; from then on retrieve, content and
// delete answer 404 and list leaves it out, as the public API does once it
// deleted the file; the sweeper the local upstream's work starts deletes
// its content and row at once (then every file_sweep_interval), and stops
// with the work. The clock is the store's, set by the test.
func TestExpiredFilesThroughTheAPI(t *testing.T) {
	var clock atomic.Int64
	clock.Store(1_800_000_000)
	saved := store.Now
	store.Now = clock.Load
	t.Cleanup(func() { store.Now = saved })
	dir := t.TempDir()
	l := &Local{DataDir: dir}
	if err := provisionLocal(t, l); err != nil {
		t.Fatal(err)
	}
	if time.Duration(l.FileSweepInterval) != time.Minute {
		t.Fatalf("default file_sweep_interval %v, want 1m", time.Duration(l.FileSweepInterval))
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("purpose", "assistants")
	mw.WriteField("expires_after[anchor]", "created_at")
	mw.WriteField("expires_after[seconds]", "3600")
	part, _ := mw.CreateFormFile("file", "notes.txt")
	part.Write([]byte("expiring content"))
	mw.Close()
	rec := callLocal(t, l, upstreams.OpFilesCreate, "POST", "/v1/files", nil, &body, mw.FormDataContentType())
	var f struct {
		ID        string `json:"id"`
		CreatedAt int64  `json:"created_at"`
		ExpiresAt *int64 `json:"expires_at"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &f); err != nil || rec.Code != 200 || f.ExpiresAt == nil || *f.ExpiresAt != f.CreatedAt+3600 {
		t.Fatalf("upload: %d %s", rec.Code, rec.Body)
	}
	id := map[string]string{"file_id": f.ID}
	check := func(when string, status int, listed bool) {
		t.Helper()
		for _, op := range []struct{ op, path string }{{upstreams.OpFilesRetrieve, "/v1/files/" + f.ID}, {upstreams.OpFilesContent, "/v1/files/" + f.ID + "/content"}} {
			if rec := callLocal(t, l, op.op, "GET", op.path, id, nil, ""); rec.Code != status {
				t.Fatalf("%s: %s %d %s, want %d", when, op.op, rec.Code, rec.Body, status)
			}
		}
		rec := callLocal(t, l, upstreams.OpFilesList, "GET", "/v1/files", nil, nil, "")
		if got := bytes.Contains(rec.Body.Bytes(), []byte(f.ID)); rec.Code != 200 || got != listed {
			t.Fatalf("%s: list %d %s, want listed %v", when, rec.Code, rec.Body, listed)
		}
	}
	clock.Add(3599)
	check("a second before expires_at", 200, true)
	clock.Add(1)
	check("at expires_at", 404, false)
	rec = callLocal(t, l, upstreams.OpFilesDelete, "DELETE", "/v1/files/"+f.ID, id, nil, "")
	if want := fmt.Sprintf("No file found with id '%s'.", f.ID); rec.Code != 404 || !bytes.Contains(rec.Body.Bytes(), []byte(want)) {
		t.Fatalf("delete at expires_at: %d %s", rec.Code, rec.Body)
	}
	// The sweeper, started with the work, deletes the content and the row.
	blob := filepath.Join(dir, "files", f.ID)
	if _, err := os.Stat(blob); err != nil {
		t.Fatalf("the content is gone before the sweep: %v", err)
	}
	l.UseDispatcher(idleDispatcher{})
	if err := l.StartWork(); err != nil {
		t.Fatal(err)
	}
	sweeper := l.sweeper
	deleted := sweptSoon(func() bool { _, err := os.Stat(blob); return err != nil })
	l.StopWork()
	if !deleted {
		t.Fatal("the sweeper never deleted the expired file's content")
	}
	select {
	case <-sweeper.done:
	default:
		t.Fatal("the sweeper still runs after StopWork")
	}
	if files, err := l.store.ExpiredFiles(context.Background(), store.Now(), 10); err != nil || len(files) != 0 {
		t.Fatalf("rows left after the sweep: %v %v", len(files), err)
	}
}
