package conformance

import (
	"fmt"
	"slices"
	"strings"
)

// Verdicts beyond pass, fail and skip: a check warns where the target does
// something the contract allows but discourages, or where the outcome
// depends on the model behind it (a non-deterministic target); a check is
// unsupported where the target declares (Config.Unsupported) that it does
// not serve what the check needs, and is then not run at all.
const (
	Warn        Status = "warn"
	Unsupported Status = "unsupported"
)

// warn records something allowed but discouraged or model-dependent; a
// failure of the same check outranks it.
func (t *T) warn(ev Evidence) {
	if t.res.Status != Fail {
		t.res.Status = Warn
	}
	t.res.Evidence = append(t.res.Evidence, ev)
}

// expectOrWarn is expect where a departure is a failure on a
// deterministic target and a warning on any other: the outcome is the
// model's to decide.
func (t *T) expectOrWarn(ok bool, ex *exchange, expected, seenFormat string, args ...any) bool {
	if ok {
		return true
	}
	ev := ex.evidence(expected, fmt.Sprintf(seenFormat, args...))
	if t.cfg.deterministic() {
		t.fail(ev)
	} else {
		t.warn(ev)
	}
	return false
}

// deterministic reports whether the target answers the same request the
// same way: the reference engine (the default model), or a target
// declared so.
func (c *Config) deterministic() bool { return c.Deterministic || c.Model == "reference" }

// unsupportedReason says why a check is not run on a target that
// declared some areas or checks unsupported, "" when it runs.
func (c *Config) unsupportedReason(ch Check) string {
	for _, u := range c.Unsupported {
		if slices.Contains(append([]string{ch.Area}, ch.Requires...), u) || covers(u, ch.ID) {
			return "the target declares it does not serve " + u
		}
	}
	return ""
}

// Failed is how many checks make the run fail: the failures and, with
// Strict, the warnings too.
func (r *Report) Failed() int {
	n := r.Count(Fail)
	if r.Strict {
		n += r.Count(Warn)
	}
	return n
}

// summary is the report's one-line count of every verdict.
func (r *Report) summary() string {
	s := fmt.Sprintf("%d passed, %d failed, %d warned, %d skipped, %d unsupported", r.Count(Pass), r.Count(Fail), r.Count(Warn), r.Count(Skip), r.Count(Unsupported))
	if r.Strict {
		s += " (strict: warnings fail)"
	}
	return s
}

// verdictRank orders a report's results: failures, warnings, skips,
// unsupported, passes.
var verdictRank = map[Status]int{Fail: 0, Warn: 1, Skip: 2, Unsupported: 3, Pass: 4}

// verdictLabel is a verdict as the text report shows it.
func verdictLabel(s Status) string {
	if s == Unsupported {
		return "UNSUP"
	}
	return strings.ToUpper(string(s))
}
