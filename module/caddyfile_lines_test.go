package modelgate_test

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
)

// TestCaddyfileRouteErrorsNameTheLine: a route's mistakes that only the
// whole directive shows (an upstream never defined, one that cannot serve
// an operation the route names, a pattern matching no operation) are
// refused by `caddy adapt` with the file and the route's line, not later
// by provisioning without them; an upstream defined after the route that
// names it is no mistake.
func TestCaddyfileRouteErrorsNameTheLine(t *testing.T) {
	adapter := caddyconfig.GetAdapter("caddyfile")
	// The route is line 7, its block (when it has one) follows.
	site := func(block string) string {
		return "{\n\tadmin off\n}\n:0 {\n\tmodelgate {\n\t\tkey k\n" + block + "\n\t}\n}\n"
	}
	for _, tc := range []struct{ name, block, want string }{
		{"mistyped upstream", "\t\troute chat.completions.create to opnai {\n\t\t\tretries 2\n\t\t}\n\t\tupstream openai {\n\t\t\tbase_url http://127.0.0.1:9/v1\n\t\t}", `route to unknown upstream "opnai"`},
		{"mistyped fallback", "\t\troute * to reference fallback nowhere", `route to unknown upstream "nowhere"`},
		{"upstream that cannot serve", "\t\troute files.create to reference", `upstream "reference" (reference) cannot serve files.create`},
		{"pattern matching nothing", "\t\troute nothing.* to reference", `pattern "nothing.*" matches no operation`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := adapter.Adapt([]byte(site(tc.block)), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "Caddyfile:7") {
				t.Fatalf("adapting: %v; want an error with %q at Caddyfile:7", err, tc.want)
			}
		})
	}
	later := "\t\troute chat.completions.create to later\n\t\tupstream later {\n\t\t\tbase_url http://127.0.0.1:9/v1\n\t\t}"
	if _, _, err := adapter.Adapt([]byte(site(later)), nil); err != nil {
		t.Fatalf("a route to an upstream defined after it: %v", err)
	}
}

// TestJSONRouteErrorsAtProvision: a JSON config, which has no lines, gets
// the same route checks when it is provisioned (caddy validate).
func TestJSONRouteErrorsAtProvision(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	for _, tc := range []struct{ routes, want string }{
		{`[{"operations":["files.*"],"upstreams":["nowhere"]}]`, `unknown upstream "nowhere"`},
		{`[{"operations":["nothing.*"],"upstreams":["reference"]}]`, `matches no operation`},
		{`[{"operations":["files.create"],"upstreams":["reference"]}]`, `cannot serve files.create`},
	} {
		cfg := `{"admin":{"disabled":true},"apps":{"http":{"servers":{"s":{"listen":[":0"],"routes":[{"handle":[
			{"handler":"modelgate","keys":[{"key":"k"}],"routes":` + tc.routes + `}]}]}}}}}`
		if err := caddy.Validate(mustConfig(t, []byte(cfg))); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("routes %s: %v; want an error with %q", tc.routes, err, tc.want)
		}
	}
}
