package modelgate

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/modelgate/modelgate/record"
)

// cloneRedacted is how a record's header was copied before it was written
// ahead: a clone of the map, the secret names' values replaced. It is the
// oracle of TestWrittenHeadersWriteAsTheMapCopyDid.
func cloneRedacted(h http.Header) http.Header {
	out := h.Clone()
	for _, name := range secretHeaders {
		if len(out[name]) > 0 {
			out[name] = []string{"[redacted]"}
		}
	}
	return out
}

// randomRecordHeader draws a header of secret names (canonical or not),
// names that sort near them, and values nil, empty or several.
func randomRecordHeader(r *rand.Rand) http.Header {
	if r.IntN(8) == 0 {
		return nil
	}
	names := append([]string{"authorization", "X-Api-Key2", "Content-Type", "Accept", "X-Trace", "Cookies", "", "a\xffb"}, secretHeaders...)
	h := http.Header{}
	for range r.IntN(10) {
		var values []string
		switch r.IntN(5) {
		case 0:
		case 1:
			values = []string{}
		default:
			for range 1 + r.IntN(3) {
				values = append(values, names[r.IntN(len(names))]+" <v>\u2028")
			}
		}
		h[names[r.IntN(len(names))]] = values
	}
	return h
}

// TestWrittenHeadersWriteAsTheMapCopyDid: a record whose headers
// writtenHeaders wrote ahead is written byte for byte as one whose
// headers were copied as a map and redacted there; and changing the
// header after it was written (as a handler after the gateway's may)
// changes nothing written.
func TestWrittenHeadersWriteAsTheMapCopyDid(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var enc record.Encoder
	for range 5000 {
		req, resp := randomRecordHeader(r), randomRecordHeader(r)
		want := enc.Append(nil, &record.Record{
			Request:  record.Request{Header: cloneRedacted(req)},
			Response: record.Response{Header: cloneRedacted(resp)},
		})
		reqHeader, respHeader := writtenHeaders(req, resp)
		rec := &record.Record{Request: record.Request{Written: reqHeader}, Response: record.Response{Written: respHeader}}
		for _, h := range []http.Header{req, resp} {
			if h == nil {
				continue
			}
			for name, values := range h {
				if len(values) > 0 {
					values[0] = "changed"
				}
				h.Add(name, "added")
			}
			h.Set("X-Set-Later", "x")
		}
		if got := enc.Append(nil, rec); !bytes.Equal(got, want) {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	}
}
