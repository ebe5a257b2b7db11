package gatewaytest

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// Envelope is the public error body.
type Envelope struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// RawRequest sends a request with header (asking again when the dial fails)
// and returns the response with its error envelope, which a status of 400 or
// more must carry as JSON.
func RawRequest(t *testing.T, method, url, body string, header map[string]string) (*http.Response, Envelope) {
	t.Helper()
	var resp *http.Response
	// A dial refused or reset (a reload swapping servers) never reached the
	// server, so asking again is safe; anything else is the test's failure.
	for try := 0; ; try++ {
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body == "" {
			req.Body = http.NoBody
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err = http.DefaultClient.Do(req)
		var op *net.OpError
		if err != nil && errors.As(err, &op) && op.Op == "dial" && try < 4 {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	LastBody = data
	var env Envelope
	if resp.StatusCode >= 400 {
		if err := json.Unmarshal(data, &env); err != nil || env.Error.Message == "" {
			t.Fatalf("%s %s: status %d without an error envelope: %s", method, url, resp.StatusCode, data)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Fatalf("error Content-Type = %q", ct)
		}
	}
	return resp, env
}

// LastBody is the body of the last RawRequest, for tests that decode it.
var LastBody []byte

// JSONUnmarshal is json.Unmarshal.
var JSONUnmarshal = json.Unmarshal

// Merge is a copy of a with the entries of b added over it.
func Merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
