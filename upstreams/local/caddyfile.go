package local

import (
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"
)

// UnmarshalCaddyfile reads the upstream's block:
//
//	upstream <name> local {
//	    data_dir <path>
//	    batch_concurrency <n>
//	    max_batches <n>
//	    max_ingestions <n>
//	    batch_lease <duration>
//	    max_attempts <n>
//	    file_sweep_interval <duration>
//	    postgres <dsn>
//	    pool_wait <duration>
//	    embedding_model <model>
//	    search_dialect spec|openai|auto
//	    storage_quota <size>|off
//	    max_batch_output <size>|off
//	    max_queued_batches <n>|off
//	    max_queued_lines <n>|off
//	    disk_reserve <size>|off
//	    search_index_memory <size>|off
//	}
func (l *Local) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the upstream's name or type
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "data_dir":
			if !d.AllArgs(&l.DataDir) {
				return d.ArgErr()
			}
		case "batch_concurrency", "max_attempts", "max_batches", "max_ingestions":
			option := d.Val()
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return d.Errf("%s must be a positive integer, got %q", option, v)
			}
			*map[string]*int{"batch_concurrency": &l.BatchConcurrency, "max_attempts": &l.MaxAttempts,
				"max_batches": &l.MaxBatches, "max_ingestions": &l.MaxIngestions}[option] = n
		case "batch_lease", "file_sweep_interval", "pool_wait", "provider_object_retention", "busy_timeout":
			option := d.Val()
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			dur, err := caddy.ParseDuration(v)
			if err != nil {
				return d.Errf("%s: %v", option, err)
			}
			*map[string]*caddy.Duration{"batch_lease": &l.BatchLease, "file_sweep_interval": &l.FileSweepInterval, "pool_wait": &l.PoolWait,
				"provider_object_retention": &l.ProviderObjectRetention, "busy_timeout": &l.BusyTimeout}[option] = caddy.Duration(dur)
		case "postgres":
			if !d.AllArgs(&l.Postgres) {
				return d.ArgErr()
			}
		case "embedding_model":
			if !d.AllArgs(&l.EmbeddingModel) {
				return d.ArgErr()
			}
		case "search_dialect":
			if !d.AllArgs(&l.SearchDialect) {
				return d.ArgErr()
			}
		case "storage_quota", "max_batch_output", "disk_reserve", "max_queued_lines", "search_index_memory":
			if err := parseLimit(d, map[string]*int64{"storage_quota": &l.StorageQuota, "max_batch_output": &l.MaxBatchOutput,
				"disk_reserve": &l.DiskReserve, "max_queued_lines": &l.MaxQueuedLines, "search_index_memory": &l.SearchIndexMemory}[d.Val()],
				d.Val() != "max_queued_lines"); err != nil {
				return err
			}
		case "max_queued_batches":
			var n int64
			if err := parseLimit(d, &n, false); err != nil {
				return err
			}
			l.MaxQueuedBatches = int(n)
		default:
			return d.Errf("unrecognized local upstream option %q", d.Val())
		}
	}
	return nil
}

// parseLimit reads the option's one argument into v: `off` (-1), or a
// positive size (64MiB, 10GB) when size is set, else a positive integer.
func parseLimit(d *caddyfile.Dispenser, v *int64, size bool) error {
	option := d.Val()
	var arg string
	if !d.AllArgs(&arg) {
		return d.ArgErr()
	}
	if arg == "off" {
		*v = -1
		return nil
	}
	var n int64
	var err error
	if size {
		var u uint64
		u, err = humanize.ParseBytes(arg)
		n = int64(u)
	} else {
		n, err = strconv.ParseInt(arg, 10, 64)
	}
	if err != nil || n < 1 {
		if size {
			return d.Errf("%s must be off or a positive size such as 10GiB, got %q", option, arg)
		}
		return d.Errf("%s must be off or a positive integer, got %q", option, arg)
	}
	*v = n
	return nil
}
