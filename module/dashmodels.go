package modelgate

import (
	"fmt"
	"runtime/debug"
	"sort"
	"time"

	"github.com/modelgate/modelgate/module/pricing"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// processStarted is when this process loaded modelgate: the uptime the
// dashboard shows.
var processStarted = time.Now()

// modelView is one line of the dashboard's models table.
type modelView struct {
	Name                      string
	Live, Batch, Errors       int64
	InputTokens, OutputTokens int64
	Spend                     string
}

// modelViews are the models' counts, busiest first.
func (s *dashStats) modelViews() []modelView {
	var out []modelView
	s.models.Range(func(name, val any) bool {
		m := val.(*modelStats)
		out = append(out, modelView{Name: name.(string), Live: m.live.Load(), Batch: m.batch.Load(), Errors: m.errors.Load(),
			InputTokens: m.inputTokens.Load(), OutputTokens: m.outputTokens.Load(), Spend: pricing.USD(m.spend.Load())})
		return true
	})
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Live+out[i].Batch, out[j].Live+out[j].Batch
		return a > b || a == b && out[i].Name < out[j].Name
	})
	return out
}

// batchPace is a running batch's rate (lines done a minute since it
// started running) and the time it will take at that rate, both "–" until
// a line is done.
func batchPace(b store.Batch, now time.Time) (rate, eta string) {
	done := b.Completed + b.Failed
	if b.InProgressAt == nil || done == 0 {
		return "–", "–"
	}
	elapsed := now.Sub(time.Unix(*b.InProgressAt, 0))
	if elapsed < time.Second {
		elapsed = time.Second
	}
	perMinute := float64(done) / elapsed.Minutes()
	left := max(0, b.Total-done)
	return fmt.Sprintf("%.1f/min", perMinute), (time.Duration(float64(left) / perMinute * float64(time.Minute))).Round(time.Second).String()
}

// buildVersion is the modelgate module's version in the binary (a tag, a
// pseudo-version, or "(devel)" for a build of a checkout).
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if info.Main.Path == modulePath {
		return info.Main.Version
	}
	for _, dep := range info.Deps {
		if dep.Path == modulePath {
			return dep.Version
		}
	}
	return "unknown"
}

// modulePath is modelgate's Go module path.
const modulePath = "github.com/modelgate/modelgate"
