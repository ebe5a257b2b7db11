package gatewaytest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/openai/openai-go/v3"
)

// ChildConfigEnv makes the test binary a gateway process: it serves the
// Caddyfile named by the variable until it is killed.
const ChildConfigEnv = "MODELGATE_TEST_CHILD_CADDYFILE"

// ChildGateway runs the gateway in a separate process.
type ChildGateway struct {
	Cmd  *exec.Cmd
	Base string
	// waited makes Wait called once, whoever asks first (a test that
	// kills the process, or its cleanup).
	waited  sync.Once
	waitErr error
}

// Wait waits for the process to exit, once; later calls return at once.
func (c *ChildGateway) Wait() error {
	c.waited.Do(func() { c.waitErr = c.Cmd.Wait() })
	return c.waitErr
}

// StartChild starts a gateway process whose local upstream has the option
// store: `data_dir <path>` or `postgres <dsn>`.
func StartChild(t testing.TB, store string, port int) *ChildGateway {
	t.Helper()
	return StartChildWith(t, store, "", port)
}

// StartChildWith is StartChild with extra lines in the modelgate block
// (upstreams, routes); store may be several lines of the local upstream,
// batch_lease (2s otherwise) among them.
func StartChildWith(t testing.TB, store, extra string, port int) *ChildGateway {
	t.Helper()
	return StartChildGlobal(t, "", store, extra, port)
}

// StartChildGlobal is StartChildWith with extra global options.
func StartChildGlobal(t testing.TB, global, store, extra string, port int) *ChildGateway {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "Caddyfile")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`{
	admin off
	persist_config off
	log {
		level ERROR
	}
	%s
}
http://127.0.0.1:%d {
	modelgate {
		key %s
		upstream local local {
			batch_lease 2s
			%s
		}
		%s
	}
}
`, global, port, ClientKey, store, extra)), 0o600)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), ChildConfigEnv+"="+cfg)
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child := &ChildGateway{Cmd: cmd, Base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	t.Cleanup(func() { cmd.Process.Kill(); child.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "READY" {
		t.Fatalf("child gateway did not start: %q %v", line, err)
	}
	return child
}

// KillMidUpload kills the gateway with SIGKILL halfway through an upload
// of size bytes.
func (c *ChildGateway) KillMidUpload(t *testing.T, size int64) {
	t.Helper()
	halfway := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := UploadStream(context.Background(), c.Base, "big.jsonl", size, halfway)
		done <- err
	}()
	<-halfway
	c.Cmd.Process.Signal(syscall.SIGKILL)
	c.Wait()
	if err := <-done; err == nil {
		t.Fatal("the upload succeeded although the gateway was killed")
	}
}

// UploadStream sends a multipart upload of size bytes produced on the fly;
// sent is closed after the first half has gone out.
func UploadStream(ctx context.Context, base, name string, size int64, halfway chan<- struct{}) (*http.Response, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		mw.WriteField("purpose", "batch")
		part, _ := mw.CreateFormFile("file", name)
		chunk := bytes.Repeat([]byte(`{"custom_id":"x","method":"POST"}`+"\n"), 1<<15) // ~1 MiB
		var sent int64
		for sent < size {
			n := min(int64(len(chunk)), size-sent)
			if _, err := part.Write(chunk[:n]); err != nil {
				pw.CloseWithError(err)
				return
			}
			sent += n
			if halfway != nil && sent >= size/2 {
				close(halfway)
				halfway = nil
			}
		}
		mw.Close()
		pw.Close()
	}()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/files", pr)
	req.Header.Set("Authorization", "Bearer "+ClientKey)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return http.DefaultClient.Do(req)
}

// PeakRSS reads VmHWM (peak resident set) of a process, in bytes.
func PeakRSS(t testing.TB, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// RunningBatch creates a batch of n chat requests to the reference engine
// and polls it until a tenth of them are done, or it completed (too fast
// for the caller's purpose, which the caller reports).
func RunningBatch(t *testing.T, client openai.Client, n int) (*openai.Batch, *openai.Batch) {
	t.Helper()
	b, err := client.Batches.New(context.Background(), openai.BatchNewParams{InputFileID: UploadBatchFile(t, client, BatchInput(n, "gpt-4o-mini")),
		Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	for {
		progress := PollBatch(t, client, b.ID, openai.BatchStatusInProgress, openai.BatchStatusCompleted)
		if progress.RequestCounts.Completed >= int64(n/10) || progress.Status == openai.BatchStatusCompleted {
			return b, progress
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Main is a TestMain for a package whose tests start gateway processes
// (StartChild): run with ChildConfigEnv set, the test binary serves that
// Caddyfile until it is killed; otherwise it runs the tests.
func Main(m *testing.M) {
	if path := os.Getenv(ChildConfigEnv); path != "" {
		// SIGTERM and SIGINT as `caddy run` takes them: the apps are
		// stopped (connections drained for the grace period, the
		// modules cleaned up), then the process exits.
		caddy.TrapSignals()
		src, err := os.ReadFile(path)
		if err == nil {
			var cfg []byte
			cfg, _, err = caddyconfig.GetAdapter("caddyfile").Adapt(src, nil)
			if err == nil {
				err = caddy.Load(cfg, true)
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "child gateway:", err)
			os.Exit(2)
		}
		fmt.Println("READY")
		select {}
	}
	os.Exit(m.Run())
}
