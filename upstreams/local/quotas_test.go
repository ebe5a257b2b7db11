package local

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// TestStorageLimitOptions: the storage and queue limits read sizes (or
// counts) and `off`, refuse anything else naming the option, and default
// when unset; `off` stays off.
func TestStorageLimitOptions(t *testing.T) {
	var l Local
	err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser("local {\n storage_quota 10GiB\n max_batch_output off\n max_queued_batches 7\n max_queued_lines 1000\n disk_reserve 1MiB\n}"))
	if err != nil || l.StorageQuota != 10<<30 || l.MaxBatchOutput != -1 || l.MaxQueuedBatches != 7 || l.MaxQueuedLines != 1000 || l.DiskReserve != 1<<20 {
		t.Fatalf("parsed %+v, %v", l, err)
	}
	l.provisionLimits()
	if l.MaxBatchOutput != -1 {
		t.Fatalf("off became %d", l.MaxBatchOutput)
	}
	var unset Local
	unset.provisionLimits()
	if unset.StorageQuota != defaultStorageQuota || unset.MaxBatchOutput != defaultMaxBatchOutput || unset.MaxQueuedBatches != defaultMaxQueuedBatches ||
		unset.MaxQueuedLines != defaultMaxQueuedLines || unset.DiskReserve != defaultDiskReserve {
		t.Fatalf("defaults %+v", unset)
	}
	for _, bad := range []string{"storage_quota 0", "storage_quota lots", "disk_reserve -1MiB", "max_queued_batches 1.5", "max_queued_lines 0", "max_batch_output"} {
		var l Local
		err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser("local {\n " + bad + "\n}"))
		if err == nil || !strings.Contains(err.Error(), strings.Fields(bad)[0]) && !strings.Contains(err.Error(), "argument") {
			t.Errorf("%q: %v, want an error naming the option", bad, err)
		}
	}
}

// TestLineCounter: lines are counted across writes, the last one with or
// without its newline.
func TestLineCounter(t *testing.T) {
	for _, c := range []struct {
		parts []string
		want  int64
	}{{nil, 0}, {[]string{"a"}, 1}, {[]string{"a\n"}, 1}, {[]string{"a\nb", "c\n", "d"}, 3}, {[]string{"a\n", ""}, 1}, {[]string{"\n\n"}, 2}} {
		var lc lineCounter
		for _, p := range c.parts {
			lc.Write([]byte(p))
		}
		if got := lc.count(); got != c.want {
			t.Errorf("%q: %d lines, want %d", c.parts, got, c.want)
		}
	}
}
