package local

import (
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
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
//	    embedding_model <model>
//	    search_dialect spec|openai|auto
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
		case "batch_lease", "file_sweep_interval", "provider_object_retention", "busy_timeout":
			option := d.Val()
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			dur, err := caddy.ParseDuration(v)
			if err != nil {
				return d.Errf("%s: %v", option, err)
			}
			*map[string]*caddy.Duration{"batch_lease": &l.BatchLease, "file_sweep_interval": &l.FileSweepInterval,
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
		default:
			return d.Errf("unrecognized local upstream option %q", d.Val())
		}
	}
	return nil
}
