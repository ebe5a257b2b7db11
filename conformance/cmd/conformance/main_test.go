package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// notImplemented answers every request 501 in the error envelope.
func notImplemented(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotImplemented)
		io.WriteString(w, `{"error":{"message":"not implemented","type":"server_error","param":null,"code":null}}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestRunReportsFailuresWithExitStatus(t *testing.T) {
	junit := filepath.Join(t.TempDir(), "report.xml")
	var out bytes.Buffer
	err := run(context.Background(), []string{"run", "--base-url", notImplemented(t) + "/v1", "--api-key", "k", "--areas", "threads", "--junit", junit}, &out)
	if !errors.Is(err, errFailed) {
		t.Fatalf("run against a 501 target: %v, want errFailed", err)
	}
	if !strings.Contains(out.String(), "FAIL  threads.lifecycle") || !strings.Contains(out.String(), "status 501") {
		t.Fatalf("report lacks the failure and its evidence:\n%s", out.String())
	}
	xml, err := os.ReadFile(junit)
	if err != nil || !bytes.Contains(xml, []byte(`<testcase name="threads.lifecycle"`)) || !bytes.Contains(xml, []byte("<failure")) {
		t.Fatalf("JUnit report: %v\n%s", err, xml)
	}
	out.Reset()
	if err := run(context.Background(), []string{"run", "--base-url", "http://x", "--api-key", "k", "--areas", "nope"}, &out); err == nil || errors.Is(err, errFailed) {
		t.Fatalf("an unknown area: %v, want a usage error", err)
	}
}

// TestRunStopsOnARefusedKeyOrNoTarget: a key the target refuses, or a
// target that is not there, is one error (exit status 2), said once,
// rather than every check failing for it; replay stops the same way. So
// does a choice of areas under which no check runs.
func TestRunStopsOnARefusedKeyOrNoTarget(t *testing.T) {
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)
	}))
	defer refusing.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	records := filepath.Join(t.TempDir(), "rec.jsonl")
	os.WriteFile(records, []byte(`{"operation":"files.list","request":{"method":"GET","path":"/v1/files","header":{}},"status":200,"response":{"header":{},"body":{"object":"list","data":[],"has_more":false}}}`+"\n"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--base-url", refusing.URL, "--api-key", "wrong"}, "refused the API key"},
		{[]string{"run", "--base-url", gone.URL, "--api-key", "k"}, "cannot reach " + gone.URL},
		{[]string{"replay", "--base-url", refusing.URL, "--api-key", "wrong", records}, "refused the API key"},
		// Every limits check also uses another area's operations.
		{[]string{"run", "--base-url", refusing.URL, "--api-key", "k", "--areas", "limits"}, "no check runs with areas limits"},
	} {
		var out bytes.Buffer
		err := run(context.Background(), c.args, &out)
		if err == nil || errors.Is(err, errFailed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error saying %q", c.args, err, c.want)
		}
		if strings.Contains(out.String(), "FAIL") {
			t.Errorf("%v: checks ran:\n%s", c.args, out.String())
		}
	}
}

func TestCheckRecordsNamesTheBadRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	lines := `{"operation":"threads.create","request":{"method":"POST","path":"/v1/threads","header":{}},"status":200,"response":{"header":{},"body":{"id":"thread_1","object":"thread","created_at":1,"metadata":{},"tool_resources":{}}}}
{"operation":"threads.retrieve","request":{"method":"GET","path":"/v1/threads/thread_1","header":{}},"status":404,"response":{"header":{},"body_text":"<html>not found</html>"}}
`
	os.WriteFile(path, []byte(lines), 0o600)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"check-records", path}, &out); !errors.Is(err, errFailed) {
		t.Fatalf("check-records: %v, want errFailed\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "rec.jsonl:2 threads.retrieve") || strings.Contains(out.String(), "rec.jsonl:1 ") {
		t.Fatalf("findings name the wrong records:\n%s", out.String())
	}
}

// TestReplayTakesFlagsAfterFilesAndAreas: `replay FILE --base-url URL`
// works as the issue writes it, and --areas leaves other areas unsent.
func TestReplayTakesFlagsAfterFilesAndAreas(t *testing.T) {
	var mu sync.Mutex
	var sent []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent = append(sent, r.URL.String())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[],"first_id":null,"last_id":null,"has_more":false}`)
	}))
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	lines := `{"operation":"files.list","request":{"method":"GET","path":"/v1/files","header":{}},"status":200,"response":{"header":{},"body":{"object":"list","data":[],"first_id":null,"last_id":null,"has_more":false}}}
{"operation":"batches.list","request":{"method":"GET","path":"/v1/batches","header":{}},"status":200,"response":{"header":{},"body":{"object":"list","data":[],"first_id":null,"last_id":null,"has_more":false}}}
`
	os.WriteFile(path, []byte(lines), 0o600)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"replay", path, "--base-url", srv.URL, "--api-key", "k", "--areas", "files"}, &out); err != nil {
		t.Fatalf("replay: %v\n%s", err, out.String())
	}
	mu.Lock()
	defer mu.Unlock()
	// The preflight (files with limit 1), then the one record of --areas.
	if strings.Join(sent, " ") != "/v1/files?limit=1 /v1/files" || !strings.Contains(out.String(), "batches.list skipped: its area, batches, is not replayed") {
		t.Fatalf("sent %v; report:\n%s", sent, out.String())
	}
}

// TestUnsupportedAndStrictFlags: --unsupported reports the declared
// areas' checks unsupported and runs none (exit 0 against a target that
// serves none of them).
func TestUnsupportedAndStrictFlags(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"run", "--base-url", notImplemented(t), "--api-key", "k", "--areas", "threads", "--unsupported", "threads", "--strict"}, &out)
	if err != nil || !strings.Contains(out.String(), "UNSUP threads.lifecycle") || !strings.Contains(out.String(), "0 failed, 0 warned") {
		t.Fatalf("run with --unsupported threads: %v\n%s", err, out.String())
	}
}

// TestDiffCommand: the same replies from both targets are no difference
// (exit 0); one member changed on one operation is exactly one (exit 1).
func TestDiffCommand(t *testing.T) {
	serve := func(embeddings string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if r.URL.Path == "/v1/embeddings" {
				io.WriteString(w, embeddings)
				return
			}
			io.WriteString(w, `{"id":"x-`+r.URL.Path+`","object":"thing","created_at":1700000000}`)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	a, same, other := serve(`{"object":"list","n":1}`), serve(`{"object":"list","n":1}`), serve(`{"object":"list","n":2}`)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"diff", "--base-url", a, "--against", same, "--api-key", "k"}, &out); err != nil || !strings.Contains(out.String(), " 0 differences") {
		t.Fatalf("identical targets: %v\n%s", err, out.String())
	}
	out.Reset()
	err := run(context.Background(), []string{"diff", "--base-url", a, "--against", other, "--api-key", "k"}, &out)
	if !errors.Is(err, errFailed) || !strings.Contains(out.String(), " 1 differences") || !strings.Contains(out.String(), "embeddings.create: body.n") {
		t.Fatalf("one difference: %v\n%s", err, out.String())
	}
}
