package upstreams

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// TestWriteErrorDeclaresItsLength: the envelope's Content-Length is
// declared (a reply flushed before its handler returns, as a refusal that
// closes its connection on an unread body is, is then whole on the wire),
// also over a length an upstream's reply left in the header; WriteJSON
// leaves the length to the server.
func TestWriteErrorDeclaresItsLength(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Length", "1")
	WriteError(rec, InvalidRequest("model", "The model %q does not exist.", "m"))
	if got, want := rec.Header().Get("Content-Length"), strconv.Itoa(rec.Body.Len()); got != want || rec.Code != http.StatusBadRequest {
		t.Fatalf("%d, Content-Length %q, want %s", rec.Code, got, want)
	}
	rec = httptest.NewRecorder()
	rec.Header().Set("Content-Length", "1")
	WriteJSON(rec, http.StatusOK, map[string]string{"object": "list"})
	if got := rec.Header().Get("Content-Length"); got != "" {
		t.Fatalf("WriteJSON: Content-Length %q", got)
	}
}
