package store

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// Keys of the quota tests: a and b share the owner team, c is another's.
const (
	quotaKeyA = "sk-quota-test-key-000a"
	quotaKeyB = "sk-quota-test-key-000b"
	quotaKeyC = "sk-quota-test-key-000c"
)

// quotaKeys is the key lines of the quota tests' gateways.
const quotaKeys = `
		key ` + quotaKeyA + ` {
			owner team
		}
		key ` + quotaKeyB + ` {
			owner team
		}
		key ` + quotaKeyC + ` {
			owner other
		}`

// uploadBytes uploads n bytes as an assistants file.
func uploadBytes(client openai.Client, n int) (*openai.FileObject, error) {
	return client.Files.New(context.Background(), openai.FileNewParams{
		File: openai.File(bytes.NewReader(bytes.Repeat([]byte("q"), n)), "data.txt", "text/plain"), Purpose: openai.FilePurposeAssistants})
}

// mustRefuseQuota checks err is the 429 insufficient_quota refusal
// naming param, which tells the SDKs not to retry.
func mustRefuseQuota(t *testing.T, what string, err error, param string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: accepted, want 429 insufficient_quota", what)
	}
	e := gatewaytest.AsAPIError(t, err)
	if e.StatusCode != http.StatusTooManyRequests || e.Type != "insufficient_quota" || e.Code != "insufficient_quota" || e.Param != param || e.Message == "" {
		t.Fatalf("%s: %d type %q code %q param %q %q; want 429 insufficient_quota, param %q", what, e.StatusCode, e.Type, e.Code, e.Param, e.Message, param)
	}
	if got := e.Response.Header.Get("X-Should-Retry"); got != "false" {
		t.Fatalf("%s: x-should-retry %q, want false", what, got)
	}
}

// TestStorageQuotaPerOwner: an owner's files may take storage_quota bytes
// exactly; one byte more is refused (429 insufficient_quota, param file)
// whichever of the owner's keys uploads it, and is not kept; another
// owner's quota is its own; deleting makes room again.
func TestStorageQuotaPerOwner(t *testing.T) {
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {%s
		upstream local local {
			data_dir %s
			storage_quota 1000
		}
		route files.* to local
	}`, quotaKeys, t.TempDir()))
	a, b, c := gatewaytest.SDK(base, option.WithAPIKey(quotaKeyA)), gatewaytest.SDK(base, option.WithAPIKey(quotaKeyB)), gatewaytest.SDK(base, option.WithAPIKey(quotaKeyC))
	first, err := uploadBytes(a, 600)
	if err != nil {
		t.Fatal(err)
	}
	_, err = uploadBytes(b, 401)
	mustRefuseQuota(t, "1,001 bytes for the owner", err, "file")
	if _, err := uploadBytes(b, 400); err != nil {
		t.Fatalf("1,000 bytes for the owner: %v", err)
	}
	_, err = uploadBytes(a, 1)
	mustRefuseQuota(t, "a byte past the quota", err, "file")
	page, err := a.Files.List(context.Background(), openai.FileListParams{})
	if err != nil || len(page.Data) != 2 {
		t.Fatalf("the owner lists %d files (%v), want the 2 within the quota", len(page.Data), err)
	}
	if _, err := uploadBytes(c, 1000); err != nil {
		t.Fatalf("another owner's 1,000 bytes: %v", err)
	}
	if _, err := a.Files.Delete(context.Background(), first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := uploadBytes(a, 600); err != nil {
		t.Fatalf("600 bytes once 600 were deleted: %v", err)
	}
}

// heldProvider answers chat completions with a small completion; requests
// whose body holds HOLD wait until the test ends.
func heldProvider(t *testing.T) *httptest.Server {
	release := make(chan struct{})
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte("HOLD")) {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, gatewaytest.CompletionOfSize(400))
	}))
	t.Cleanup(provider.Close)
	t.Cleanup(func() { close(release) }) // before the provider closes, and the gateway stops
	return provider
}

// heldLines is a batch input of n requests the held provider holds.
func heldLines(n int) string {
	var s strings.Builder
	for i := range n {
		s.WriteString(gatewaytest.ChatBatchLine(fmt.Sprintf("held-%d", i), "HOLD"))
	}
	return s.String()
}

// TestBatchQueueLimitsPerKey: a key may have max_queued_batches batches
// and max_queued_lines lines validating or in progress; one line more is
// refused at create (429 insufficient_quota, param input_file_id), and so
// is one batch more; another key of the same owner has a queue of its own.
func TestBatchQueueLimitsPerKey(t *testing.T) {
	provider := heldProvider(t)
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {%s
		upstream local local {
			data_dir %s
			max_queued_batches 2
			max_queued_lines 5
		}
		upstream p openai {
			base_url %s/v1
		}
		route chat.completions.create to p
		route files.* batches.* to local
	}`, quotaKeys, t.TempDir(), provider.URL))
	a, b := gatewaytest.SDK(base, option.WithAPIKey(quotaKeyA)), gatewaytest.SDK(base, option.WithAPIKey(quotaKeyB))
	three, two, one := gatewaytest.UploadBatchFile(t, a, heldLines(3)), gatewaytest.UploadBatchFile(t, a, heldLines(2)), gatewaytest.UploadBatchFile(t, a, heldLines(1))
	if _, err := gatewaytest.NewBatch(a, three); err != nil {
		t.Fatal(err)
	}
	_, err := gatewaytest.NewBatch(a, three)
	mustRefuseQuota(t, "6 queued lines", err, "input_file_id")
	if _, err := gatewaytest.NewBatch(a, two); err != nil {
		t.Fatalf("5 queued lines: %v", err)
	}
	_, err = gatewaytest.NewBatch(a, one)
	mustRefuseQuota(t, "a third queued batch", err, "")
	if !strings.Contains(gatewaytest.AsAPIError(t, err).Message, "max_queued_batches") {
		t.Fatalf("the refusal does not name the limit: %v", err)
	}
	if _, err := gatewaytest.NewBatch(b, one); err != nil {
		t.Fatalf("the other key's first batch: %v", err)
	}
}
