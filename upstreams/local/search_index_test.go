package local

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// TestSearchIndexMemoryOption: search_index_memory reads a size or
// `off` (no index kept: -1) and refuses anything else, naming itself.
func TestSearchIndexMemoryOption(t *testing.T) {
	for arg, want := range map[string]int64{"256MiB": 256 << 20, "1": 1, "off": -1} {
		var l Local
		if err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser("local {\n search_index_memory " + arg + "\n}")); err != nil || l.SearchIndexMemory != want {
			t.Errorf("%s: %d %v, want %d", arg, l.SearchIndexMemory, err, want)
		}
	}
	for _, bad := range []string{"0", "lots", "-1MiB", ""} {
		var l Local
		err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser("local {\n search_index_memory " + bad + "\n}"))
		if err == nil || !strings.Contains(err.Error(), "search_index_memory") && !strings.Contains(err.Error(), "argument") {
			t.Errorf("%q: %v, want an error naming the option", bad, err)
		}
	}
}
