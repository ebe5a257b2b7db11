package openai

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

// TestForwardedHeaderNamesAreCanonical: newRequest reads the client's
// headers by these names from the map as net/http parsed it, where every
// name is in canonical form; a name that is not would never be found.
func TestForwardedHeaderNamesAreCanonical(t *testing.T) {
	for _, name := range forwardedRequestHeaders {
		if canonical := http.CanonicalHeaderKey(name); canonical != name {
			t.Errorf("%q is %q in canonical form", name, canonical)
		}
	}
}

// upstreamURLBases are provider base URLs, with what NewRequest changes
// in their text (an empty port) or might (escapes, a user, an empty query,
// a fragment).
var upstreamURLBases = []string{
	"http://127.0.0.1:8080/v1", "https://api.example.com/v1/", "http://h:/v1", "http://[::1]:/openai/v1",
	"http://user:p%40ss@h/base%2Fx/v1", "http://h/v1?", "http://h/v1#frag", "http://h", "https://h/a%20b/v1",
}

// FuzzUpstreamURL: the provider URL and host of a request are those
// http.NewRequest parses from the URL's text, for any client path and
// query under any base; neither is made when NewRequest refuses the text.
func FuzzUpstreamURL(f *testing.F) {
	for i := range upstreamURLBases {
		for _, in := range [][2]string{
			{"/v1/chat/completions", ""}, {"/v1/files", "limit=2&after=file-1"}, {"/v1/x y/%zz", "a#b"},
			{"/v1", ""}, {"", ""}, {"/v1/a?b#c", ""}, {"/v1/\x00\u00e9\xff", "q=\x01"}, {"//v1//x", "%"},
		} {
			f.Add(uint8(i), in[0], in[1])
		}
	}
	f.Fuzz(func(t *testing.T, b uint8, path, query string) {
		base, err := url.Parse(upstreamURLBases[int(b)%len(upstreamURLBases)])
		if err != nil {
			t.Fatal(err)
		}
		in := &url.URL{Path: path, RawQuery: query}
		got, gotErr := upstreamURL(base, in)

		// The oracle: the URL's text, as NewRequest parses it.
		target := *base
		target.Path = base.Path + strings.TrimPrefix(in.Path, "/v1")
		target.RawPath, target.RawQuery = "", in.RawQuery
		want, wantErr := http.NewRequest(http.MethodPost, target.String(), nil)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("%s %q %q: error %v, NewRequest's %v", base, path, query, gotErr, wantErr)
		}
		if wantErr == nil && (!reflect.DeepEqual(got, want.URL) || got.Host != want.Host) {
			t.Fatalf("%s %q %q: %#v, NewRequest parses %#v (host %q)", base, path, query, got, want.URL, want.Host)
		}
	})
}

// provisioned is a provider of key sk-provider at an address nothing
// answers (its requests are built, not sent).
func provisioned(t *testing.T) *Provider {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	p := &Provider{Client: translate.Client{BaseURL: "http://127.0.0.1:1/v1", APIKey: "sk-provider"}}
	if err := p.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSharedAuthorizationStaysTheProviders: the Authorization value
// requests share is the provider's key, and what a request adds to its
// headers reaches neither that value nor another request.
func TestSharedAuthorizationStaysTheProviders(t *testing.T) {
	p := provisioned(t)
	call := &upstreams.Call{Request: httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil), Body: []byte(`{}`)}
	var reqs []*http.Request
	for _, added := range []string{"Bearer one", "Bearer two"} {
		req, err := p.newRequest(call)
		if err != nil {
			t.Fatal(err)
		}
		if got := req.Header["Authorization"]; !slices.Equal(got, []string{"Bearer sk-provider"}) {
			t.Fatalf("a request's Authorization is %q", got)
		}
		req.Header.Add("Authorization", added)
		reqs = append(reqs, req)
	}
	for i, added := range []string{"Bearer one", "Bearer two"} {
		if got := reqs[i].Header["Authorization"]; !slices.Equal(got, []string{"Bearer sk-provider", added}) {
			t.Errorf("request %d's Authorization is %q after each added its own", i, got)
		}
	}
}

// TestNewRequestAsNewRequestMakesIt: the provider request newRequest
// builds is the one http.NewRequestWithContext makes of the same method,
// URL, body and context (the oracle), for a JSON body, an empty one, none
// and a streamed multipart body: the same fields, body bytes and body
// types (the transport writes a body it knows to be in memory with the
// headers), and a GetBody giving the body again.
func TestNewRequestAsNewRequestMakesIt(t *testing.T) {
	p := provisioned(t)
	type key struct{}
	for _, c := range []struct {
		name, method, target string
		json                 []byte
		stream               string
	}{
		{"json", http.MethodPost, "/v1/chat/completions", []byte(`{"model":"m"}`), ""},
		{"empty json", http.MethodPost, "/v1/chat/completions", []byte{}, ""},
		{"no body", http.MethodGet, "/v1/models?limit=2", nil, ""},
		{"multipart", http.MethodPost, "/v1/files", nil, "--b\r\n\r\nx\r\n--b--\r\n"},
	} {
		in := httptest.NewRequest(c.method, c.target, strings.NewReader(c.stream))
		in = in.WithContext(context.WithValue(in.Context(), key{}, c.name))
		call := &upstreams.Call{Request: in, Body: c.json}
		got, err := p.newRequest(call)
		if err != nil {
			t.Fatal(err)
		}

		var body io.Reader = http.NoBody
		switch {
		case c.json != nil:
			body = bytes.NewReader(c.json)
		case c.stream != "":
			body = in.Body
		}
		want, err := http.NewRequestWithContext(in.Context(), c.method, "http://127.0.0.1:1/v1"+strings.TrimPrefix(c.target, "/v1"), body)
		if err != nil {
			t.Fatal(err)
		}
		want.ContentLength = int64(len(c.json) + len(c.stream))
		want.Header = got.Header // the headers newRequest adds are the other tests'

		for _, f := range []struct {
			field     string
			got, want any
		}{
			{"method", got.Method, want.Method}, {"URL", got.URL, want.URL}, {"host", got.Host, want.Host},
			{"protocol", [3]any{got.Proto, got.ProtoMajor, got.ProtoMinor}, [3]any{want.Proto, want.ProtoMajor, want.ProtoMinor}},
			{"length", got.ContentLength, want.ContentLength}, {"context", got.Context(), want.Context()},
			{"body type", reflect.TypeOf(got.Body), reflect.TypeOf(want.Body)}, {"GetBody set", got.GetBody != nil, want.GetBody != nil},
		} {
			if !reflect.DeepEqual(f.got, f.want) {
				t.Errorf("%s: %s %v, NewRequest's %v", c.name, f.field, f.got, f.want)
			}
		}
		if c.stream != "" {
			continue // one body for both: read by neither
		}
		read := func(r io.ReadCloser) string {
			b, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		if g, w := read(got.Body), read(want.Body); g != w || g != string(c.json) {
			t.Errorf("%s: body %q, NewRequest's %q", c.name, g, w)
		}
		for i := 0; got.GetBody != nil && i < 2; i++ {
			g, _ := got.GetBody()
			w, _ := want.GetBody()
			if reflect.TypeOf(g) != reflect.TypeOf(w) {
				t.Errorf("%s: GetBody's type %T, NewRequest's %T", c.name, g, w)
			}
			if g, w := read(g), read(w); g != w {
				t.Errorf("%s: GetBody %q, NewRequest's %q", c.name, g, w)
			}
		}
	}
}
