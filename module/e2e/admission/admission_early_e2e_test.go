package admission

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestRateRefusalNeedsNoBody: a key whose requests per minute are used up
// gets its 429 for a body of 64 KiB or more (or of unknown length) before
// the body is read: a 64 KiB body that is not even JSON, a 1.9 MiB
// embeddings body that fails validation only at its last item, and a
// chunked body are 429s with the limits' headers, not 400s; a body one
// byte under 64 KiB is still read first (a 400), as every body was.
func TestRateRefusalNeedsNoBody(t *testing.T) {
	port := testgateway.FreePort(t)
	testgateway.Load(t, fmt.Sprintf(`%shttp://127.0.0.1:%d {
	modelgate {
		key %s {
			rpm 1
		}
		route * to reference
	}
}
`, testgateway.GlobalOptions, port, gatewaytest.ClientKey))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	if resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`, gatewaytest.ChatHeaders); resp.StatusCode != 200 {
		t.Fatalf("the minute's one request: %d", resp.StatusCode)
	}
	notJSON := func(n int) string { return "{" + strings.Repeat(" ", n-1) }
	resp, env := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", notJSON(64<<10-1), gatewaytest.ChatHeaders)
	if resp.StatusCode != 400 || env.Error.Type != "invalid_request_error" {
		t.Fatalf("64 KiB - 1 of not JSON: %d %+v", resp.StatusCode, env.Error)
	}
	embeddings := `{"model":"text-embedding-3-small","input":[` + strings.Repeat(`"a few words of text",`, 90_000) + `{}]}`
	for _, c := range []struct{ name, path, body string }{
		{"64 KiB of not JSON", "/v1/chat/completions", notJSON(64 << 10)},
		{fmt.Sprintf("%.1f MiB of embeddings input", float64(len(embeddings))/(1<<20)), "/v1/embeddings", embeddings},
	} {
		resp, env := gatewaytest.RawRequest(t, "POST", base+c.path, c.body, gatewaytest.ChatHeaders)
		if resp.StatusCode != 429 || env.Error.Type != "requests" || resp.Header.Get("X-Ratelimit-Remaining-Requests") != "0" || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("%s: %d %+v %v", c.name, resp.StatusCode, env.Error, resp.Header)
		}
	}
	// A chunked body: its length is unknown until it is read.
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", io.MultiReader(strings.NewReader(notJSON(10))))
	for k, v := range gatewaytest.ChatHeaders {
		req.Header.Set(k, v)
	}
	chunked, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	chunked.Body.Close()
	if chunked.StatusCode != 429 {
		t.Fatalf("a chunked body: %d", chunked.StatusCode)
	}
}
