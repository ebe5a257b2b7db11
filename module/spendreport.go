package modelgate

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/module/pricing"
	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// spendLine is one line of a spend report: the dimensions grouped by (the
// others empty) and what the work cost.
type spendLine struct {
	KeyName  string `json:"key_name,omitempty"`
	Owner    string `json:"owner,omitempty"`
	Model    string `json:"model,omitempty"`
	Upstream string `json:"upstream,omitempty"`
	// CostUSD is Pico in USD, exactly (a decimal string).
	CostUSD  string `json:"cost_usd"`
	Pico     int64  `json:"cost_picodollars"`
	Requests int64  `json:"requests"`
	Unpriced int64  `json:"unpriced_requests"`
}

// spendDimensions are what spend is grouped by, in this order.
var spendDimensions = []string{"key", "owner", "model", "upstream"}

// spendReport answers GET <path>/spend?from=&to=&group_by=: the spend of
// the hours in [from, to) (default: the current calendar month, UTC),
// grouped by the dimensions named (default: all four).
func (m *management) spendReport(ctx context.Context, gs store.GatewayStore, r *http.Request) (any, *upstreams.Error) {
	q := r.URL.Query()
	from, to := monthOf(time.Now())
	var apiErr *upstreams.Error
	if v := q.Get("from"); v != "" {
		if from, apiErr = parseHour("from", v); apiErr != nil {
			return nil, apiErr
		}
	}
	if v := q.Get("to"); v != "" {
		if to, apiErr = parseHour("to", v); apiErr != nil {
			return nil, apiErr
		}
	}
	if !from.Before(to) {
		return nil, upstreams.InvalidRequest("to", "to must be after from.")
	}
	groupBy := spendDimensions
	if v := q.Get("group_by"); v != "" {
		groupBy = strings.Split(v, ",")
		for _, d := range groupBy {
			if !slices.Contains(spendDimensions, d) {
				return nil, upstreams.InvalidRequest("group_by", "group_by is a comma-separated list of %s; %q is none of them.", strings.Join(spendDimensions, ", "), d)
			}
		}
	}
	lines, err := m.spendOf(ctx, gs, from, to, groupBy)
	if err != nil {
		m.logger.Error("reading spend", zap.Error(err))
		return nil, errManagementStore()
	}
	var total spendLine
	for _, l := range lines {
		total.Pico += l.Pico
		total.Requests += l.Requests
		total.Unpriced += l.Unpriced
	}
	total.CostUSD = pricing.USD(total.Pico)
	return map[string]any{"object": "gateway.spend", "from": from.Unix(), "to": to.Unix(), "group_by": groupBy,
		"data": lines, "total": total}, nil
}

// spendOf writes the spend this instance holds, then reads the period's,
// grouped by the dimensions given.
func (m *management) spendOf(ctx context.Context, gs store.GatewayStore, from, to time.Time, groupBy []string) ([]spendLine, error) {
	if err := m.spend.flush(ctx, gs); err != nil {
		return nil, err
	}
	rows, err := gs.Spend(ctx, from.Unix(), to.Unix())
	if err != nil {
		return nil, err
	}
	lines := []spendLine{}
	at := map[spendLine]int{}
	for _, row := range rows {
		var key spendLine
		for _, d := range groupBy {
			switch d {
			case "key":
				key.KeyName = row.KeyName
			case "owner":
				key.Owner = row.Owner
			case "model":
				key.Model = row.Model
			case "upstream":
				key.Upstream = row.Upstream
			}
		}
		i, ok := at[key]
		if !ok {
			i = len(lines)
			at[key] = i
			lines = append(lines, key)
		}
		lines[i].Pico += row.Pico
		lines[i].Requests += row.Requests
		lines[i].Unpriced += row.Unpriced
	}
	for i := range lines {
		lines[i].CostUSD = pricing.USD(lines[i].Pico)
	}
	return lines, nil
}

// monthOf is the calendar month (UTC) of t.
func monthOf(t time.Time) (from, to time.Time) {
	t = t.UTC()
	from = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	return from, from.AddDate(0, 1, 0)
}

// parseHour reads a period's bound: a date (YYYY-MM-DD, its midnight UTC)
// or an RFC 3339 time on the hour (spend is kept per hour).
func parseHour(param, v string) (time.Time, *upstreams.Error) {
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		t, err = time.Parse(time.RFC3339, v)
	}
	if err != nil {
		return t, upstreams.InvalidRequest(param, "%s must be a date (2026-11-01) or an RFC 3339 time (2026-11-01T13:00:00Z), got %q.", param, v)
	}
	if t.Unix()%3600 != 0 {
		return t, upstreams.InvalidRequest(param, "%s must be on the hour: spend is kept per hour.", param)
	}
	return t.UTC(), nil
}

// monthSpend is the current month's spend by key, owner, model and
// upstream, for the dashboard; nil without the management API.
func (m *management) monthSpend(ctx context.Context) ([]spendLine, error) {
	if m == nil {
		return nil, nil
	}
	gs, err := m.source.GatewayStore()
	if err != nil {
		return nil, err
	}
	from, to := monthOf(time.Now())
	return m.spendOf(ctx, gs, from, to, spendDimensions)
}
