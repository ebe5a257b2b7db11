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

// TestDeclaredLengthReadInOneBuffer: a body of the length its request
// declares is read into a buffer of about that length (the byte that
// reads its end, the allocator's rounding), not one with room to spare;
// one of unknown length is read whole as it grows.
func TestDeclaredLengthReadInOneBuffer(t *testing.T) {
	g := &Gateway{MaxBodySize: 64 << 20}
	op, _ := operationByID("chat.completions.create")
	for _, n := range []int{100, 1000, 10_000} {
		full := `{"model":"` + strings.Repeat("x", n-12) + `"}`
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(full))
		r.Header.Set("Content-Type", "application/json")
		body, apiErr := g.readBody(r, op)
		if apiErr != nil || string(body) != full {
			t.Fatalf("a body of %d bytes: %v, %d bytes", n, apiErr, len(body))
		}
		if spare := cap(body) - len(body); spare > len(body)/8+16 {
			t.Errorf("a body of %d bytes read into %d: %d to spare", n, cap(body), spare)
		}
		r = httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(full))
		r.Header.Set("Content-Type", "application/json")
		r.ContentLength = -1 // unknown (chunked): the buffer grows as the bytes arrive
		if body, apiErr := g.readBody(r, op); apiErr != nil || string(body) != full {
			t.Fatalf("a body of %d bytes, its length unknown: %v, %d bytes", n, apiErr, len(body))
		}
	}
}
