package record

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"testing"
)

func fieldsOf(h http.Header) []Field {
	if h == nil {
		return nil
	}
	fields := []Field{}
	for name, values := range h {
		fields = append(fields, Field{name, values})
	}
	return fields
}

// TestFieldsAreWrittenAsTheirHeader: a record whose headers are given as
// Fields is written byte for byte as with the http.Header they hold
// (which TestRecordEncoderMatchesEncodingJSON holds to encoding/json).
func TestFieldsAreWrittenAsTheirHeader(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var enc Encoder
	for range 5000 {
		rec := randomRecord(r)
		want := enc.Append(nil, rec)
		rec.Request.Fields, rec.Response.Fields = fieldsOf(rec.Request.Header), fieldsOf(rec.Response.Header)
		if rec.Request.Fields != nil { // else Header, nil, is written: null
			rec.Request.Header = http.Header{"Not-Written": {"x"}}
		}
		if got := enc.Append(nil, rec); !bytes.Equal(got, want) {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	}
}
