package store

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/internal/testpg"
)

// dripUpload uploads a batch file whose client sends 8 MiB (more than the
// loopback socket buffers hold, so the gateway is reading the file part
// when halfway closes), then waits for rest before it sends the end.
func dripUpload(base string, halfway chan<- struct{}, rest <-chan struct{}) (int, string, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		mw.WriteField("purpose", "batch")
		part, _ := mw.CreateFormFile("file", "slow.jsonl")
		line := []byte(`{"custom_id":"x","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o-mini","messages":[]}}` + "\n")
		if _, err := part.Write(bytes.Repeat(line, (8<<20)/len(line))); err != nil {
			pw.CloseWithError(err)
			return
		}
		close(halfway)
		<-rest
		mw.Close()
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", base+"/v1/files", pr)
	req.Header.Set("Authorization", "Bearer "+gatewaytest.ClientKey)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// listFiles asks files.list and returns the status, the error code and
// Retry-After; a failed exchange is status 0.
func listFiles(base string) (int, string, string) {
	req, _ := http.NewRequest("GET", base+"/v1/files", nil)
	req.Header.Set("Authorization", "Bearer "+gatewaytest.ClientKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error(), ""
	}
	defer resp.Body.Close()
	var body struct {
		Error struct{ Code string } `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body.Error.Code, resp.Header.Get("Retry-After")
}

// TestSlowUploadsDoNotStallTheStore runs, on a gateway whose PostgreSQL
// pool has 2 connections, 4 uploads whose clients stop halfway through
// their bodies: meanwhile a store request and chat are served (an upload
// holds no connection while its client sends), and each upload completes
// once its client sends the rest.
func TestSlowUploadsDoNotStallTheStore(t *testing.T) {
	const uploads = 4
	child := gatewaytest.StartChild(t, "postgres "+testpg.DSN(t)+"&pool_max_conns=2", testgateway.FreePort(t))
	rest := make(chan struct{})
	type reply struct {
		code int
		body string
	}
	replies := make(chan reply, uploads)
	for range uploads {
		halfway := make(chan struct{})
		go func() {
			code, body, err := dripUpload(child.Base, halfway, rest)
			if err != nil {
				body = err.Error()
			}
			replies <- reply{code, body}
		}()
		<-halfway
	}
	if code, errCode, _ := listFiles(child.Base); code != http.StatusOK {
		t.Fatalf("files.list during %d slow uploads on a pool of 2: %d %s", uploads, code, errCode)
	}
	client := gatewaytest.SDK(child.Base)
	if _, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello")}}); err != nil {
		t.Fatalf("chat during the slow uploads: %v", err)
	}
	close(rest)
	for range uploads {
		if r := <-replies; r.code != http.StatusOK {
			t.Fatalf("an upload answered %d once its client sent the rest: %s", r.code, r.body)
		}
	}
	files, err := client.Files.List(context.Background(), openai.FileListParams{})
	if err != nil || len(files.Data) != uploads {
		t.Fatalf("files.list after the uploads: %v, %v", files, err)
	}
}

// TestStoreBusyAnswers503 holds the only connection of a gateway's pool
// with a request stuck behind a table lock: the next store request waits
// pool_wait, then answers 503 store_busy with Retry-After; once the lock
// is gone both are served.
func TestStoreBusyAnswers503(t *testing.T) {
	dsn := testpg.DSN(t)
	child := gatewaytest.StartChild(t, "postgres "+dsn+"&pool_max_conns=1\npool_wait 300ms", testgateway.FreePort(t))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Asked on a connection of its own: inside the locking transaction
	// PostgreSQL would answer from the snapshot of pg_stat_activity it
	// took at the first look, until the transaction ends.
	watch, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)
	tx, stuck := lockWithAStuckList(t, conn, watch, child.Base)
	defer tx.Rollback(ctx)
	code, errCode, retryAfter := listFiles(child.Base)
	if code != http.StatusServiceUnavailable || errCode != "store_busy" || retryAfter != "1" {
		t.Fatalf("a store request with the pool's only connection in use: %d %q, Retry-After %q; want 503 store_busy, 1", code, errCode, retryAfter)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if code := <-stuck; code != http.StatusOK {
		t.Fatalf("the request that waited on the lock: %d", code)
	}
	if code, errCode, _ := listFiles(child.Base); code != http.StatusOK {
		t.Fatalf("a store request with the connection free again: %d %s", code, errCode)
	}
}

// lockWithAStuckList locks the files table in a transaction on conn and
// sends a files list to base, which waits on the lock holding the pool's
// only connection; it returns once watch sees the list's query waiting.
// The gateway's file sweeper, which reads the files table as the gateway
// starts, may be caught by the lock first and hold the connection
// instead: the lock is then given back and taken again, up to 5 times.
func lockWithAStuckList(t *testing.T, conn, watch *pgx.Conn, base string) (pgx.Tx, <-chan int) {
	t.Helper()
	ctx := context.Background()
	for try := 1; ; try++ {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `LOCK TABLE files IN ACCESS EXCLUSIVE MODE`); err != nil {
			t.Fatal(err)
		}
		stuck := make(chan int, 1)
		go func() {
			code, _, _ := listFiles(base)
			stuck <- code
		}()
		for look := 0; ; look++ {
			if look == 1000 {
				t.Fatal("the files list never waited on the lock")
			}
			var list, sweep int
			if err := watch.QueryRow(ctx, `SELECT COUNT(*) FILTER (WHERE query LIKE '%FROM files WHERE owner =%'), COUNT(*) FILTER (WHERE query LIKE '%FROM files WHERE expires_at <=%')
				FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FROM files%'`).Scan(&list, &sweep); err != nil {
				t.Fatal(err)
			}
			if list > 0 {
				return tx, stuck
			}
			if sweep > 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if try == 5 {
			t.Fatal("the file sweeper was caught by the lock 5 times")
		}
		t.Logf("the file sweeper was caught by the lock (try %d): taking it again", try)
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		<-stuck
	}
}
