package record

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"testing"
)

func writtenOf(h http.Header) WrittenHeader {
	b, ok := AppendHeader(nil, h, nil)
	return WrittenHeader{JSON: b, InvalidUTF8: !ok}
}

// TestWrittenHeadersAreWrittenAsTheirHeader: a record whose headers were
// written ahead by AppendHeader is written byte for byte as with the
// http.Header they were written from (which
// TestRecordEncoderMatchesEncodingJSON holds to encoding/json), its
// invalid_utf8 included.
func TestWrittenHeadersAreWrittenAsTheirHeader(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var enc Encoder
	for range 5000 {
		rec := randomRecord(r)
		want := enc.Append(nil, rec)
		rec.Request.Written, rec.Response.Written = writtenOf(rec.Request.Header), writtenOf(rec.Response.Header)
		rec.Request.Header = http.Header{"Not-Written": {"x"}}
		rec.Response.Header = nil
		if got := enc.Append(nil, rec); !bytes.Equal(got, want) {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	}
}
