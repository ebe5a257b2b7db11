package conformance

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// preflight sends one authenticated request before any check: a target
// that cannot be reached, or that refuses the key, would fail every check
// for that one reason, so the run stops and says it once. Any other
// answer (even 404 or 501, which checks report) lets the run go on.
func preflight(ctx context.Context, cfg *Config) error {
	t := &T{ctx: ctx, cfg: cfg, res: &Result{}}
	ex := &exchange{req: &request{method: http.MethodGet, path: "/v1/files", query: url.Values{"limit": {"1"}}}}
	if err := t.send(ex); err != nil {
		return fmt.Errorf("cannot reach %s: %w", cfg.BaseURL, err)
	}
	if ex.status == http.StatusUnauthorized {
		return fmt.Errorf("%s refused the API key (GET /v1/files?limit=1 answered 401: %s); every check needs a key it accepts", cfg.BaseURL, excerpt(ex.body))
	}
	return nil
}
