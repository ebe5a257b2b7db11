package translate

import (
	"errors"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/upstreams"
)

// TestDecodeErrorsSayNoGoText: a body the typed request cannot hold is a
// 400 whose message names the field in words, never encoding/json's text.
func TestDecodeErrorsSayNoGoText(t *testing.T) {
	for _, body := range []string{`{"model":"m","messages":5}`, `{"model":7,"input":"x"}`, `{"model":"m"`} {
		for name, decode := range map[string]func(*upstreams.Call) error{
			"chat":       func(c *upstreams.Call) error { _, err := DecodeChat("test", c, 1); return err },
			"embeddings": func(c *upstreams.Call) error { _, err := DecodeEmbeddings("test", c); return err },
		} {
			err := decode(&upstreams.Call{Body: []byte(body)})
			var apiErr *upstreams.Error
			if !errors.As(err, &apiErr) {
				continue // a body this decoder's request can hold
			}
			if apiErr.Status != 400 || strings.Contains(apiErr.Message, "json:") || strings.Contains(apiErr.Message, "Go value") {
				t.Errorf("%s %s: %d %q", name, body, apiErr.Status, apiErr.Message)
			}
		}
	}
}
