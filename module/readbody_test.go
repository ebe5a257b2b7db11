package modelgate

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// TestDeclaredLengthIsNotPreallocated: a request declaring 60 MiB and
// sending 10 bytes before its connection fails makes readBody allocate
// about what arrived (at most maxPrealloc more), not what was declared.
// The body of exactly maxPrealloc bytes is still read whole.
func TestDeclaredLengthIsNotPreallocated(t *testing.T) {
	g := &Gateway{MaxBodySize: 64 << 20}
	op, _ := operationByID("chat.completions.create")
	request := func(body io.Reader, declared int64) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", body)
		r.Header.Set("Content-Type", "application/json")
		r.ContentLength = declared
		return r
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 4 {
		r := request(io.MultiReader(strings.NewReader(`{"model":"`), failingReader{}), 60<<20)
		if _, apiErr := g.readBody(r, op); apiErr == nil || apiErr.Status != http.StatusBadRequest {
			t.Fatalf("a body cut short: %v", apiErr)
		}
	}
	runtime.ReadMemStats(&after)
	// What arrived needs ~4 x maxPrealloc; the margin is for whatever else
	// the test process allocates meanwhile (-race, background workers).
	// Preallocating the declared length takes 240 MiB.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Fatalf("4 requests declaring 60 MiB and sending 10 bytes allocated %d MiB", grew>>20)
	}
	full := `{"model":"` + strings.Repeat("x", maxPrealloc-12) + `"}`
	body, apiErr := g.readBody(request(strings.NewReader(full), int64(len(full))), op)
	if apiErr != nil || string(body) != full {
		t.Fatalf("a body of maxPrealloc bytes: %v, %d bytes", apiErr, len(body))
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }
