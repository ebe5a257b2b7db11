package modelgate

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// TestDecodeBudgetCaddyfile: decode_budget takes a size of 1 MiB or more
// (1MiB itself, 128MiB); one byte under, zero, a negative number, a word
// or no size are refused naming the option.
func TestDecodeBudgetCaddyfile(t *testing.T) {
	for in, want := range map[string]int64{"1MiB": 1 << 20, "1048576": 1 << 20, "128MiB": 128 << 20} {
		var g Gateway
		if err := g.UnmarshalCaddyfile(caddyfile.NewTestDispenser("modelgate {\n decode_budget " + in + "\n}")); err != nil || g.DecodeBudget != want {
			t.Errorf("decode_budget %s: %d, %v; want %d", in, g.DecodeBudget, err, want)
		}
	}
	for in, want := range map[string]string{"1048575": "bad decode_budget", "0": "bad decode_budget", "-1": "bad decode_budget",
		"lots": "bad decode_budget", "": "wrong argument count", "1MiB 2MiB": "wrong argument count"} {
		var g Gateway
		err := g.UnmarshalCaddyfile(caddyfile.NewTestDispenser("modelgate {\n decode_budget " + in + "\n}"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("decode_budget %q: %v, want an error with %q", in, err, want)
		}
	}
}
