package conformance_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/conformance"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestWarnOnAModelDependentDifference runs the stream = non-stream check
// through a target whose streamed logprobs differ: asking for a model
// the suite does not know to be deterministic, the difference is a
// warning (the run passes), a failure with --strict, in every report; on
// the reference model it is a failure.
func TestWarnOnAModelDependentDifference(t *testing.T) {
	base := testgateway.Quickstart(t, "")
	target := brokenTarget(t, base, faultNamed(t, "stream = non-stream: streamed logprobs differ"))
	id := "invariant.stream-equals-non-stream.chat.completions.create.text"
	run := func(model string, strict bool) *conformance.Report {
		t.Helper()
		report, err := conformance.Run(context.Background(), conformance.Config{BaseURL: target, APIKey: devKey, Model: model, Strict: strict, Only: []string{id}})
		if err != nil {
			t.Fatal(err)
		}
		if len(report.Results) != 1 {
			t.Fatalf("%d results", len(report.Results))
		}
		return report
	}
	if r := run("reference", false); r.Results[0].Status != conformance.Fail || r.Failed() != 1 {
		t.Errorf("on the reference model: %s, %d failing, want a failure", r.Results[0].Status, r.Failed())
	}
	lenient, strict := run("gpt-4o-mini", false), run("gpt-4o-mini", true)
	for _, r := range []*conformance.Report{lenient, strict} {
		if res := r.Results[0]; res.Status != conformance.Warn || len(res.Evidence) == 0 {
			t.Fatalf("on another model: %+v, want a warning with evidence", res)
		}
	}
	if lenient.Failed() != 0 || strict.Failed() != 1 {
		t.Errorf("failing: %d without strict (want 0), %d with (want 1)", lenient.Failed(), strict.Failed())
	}
	write := func(r *conformance.Report) (text, junit, html string) {
		var a, b, c strings.Builder
		r.WriteText(&a)
		r.WriteJUnit(&b)
		r.WriteHTML(&c)
		return a.String(), b.String(), c.String()
	}
	text, junit, html := write(lenient)
	for what, want := range map[string][]string{
		text:  {"0 failed, 1 warned", "  WARN  " + id, "expected: choice 0 streamed as not streamed"},
		junit: {"<system-out>WARNING: "},
		html:  {`id="warned">1<`, `id="warn-` + id + `"`},
	} {
		for _, w := range want {
			if !strings.Contains(what, w) {
				t.Errorf("report lacks %q:\n%s", w, what)
			}
		}
	}
	if strings.Contains(junit, "<failure") {
		t.Error("a warning is a JUnit failure without strict")
	}
	text, junit, _ = write(strict)
	if !strings.Contains(text, "(strict: warnings fail)") || !strings.Contains(junit, `<failure message="warning (strict): `) {
		t.Errorf("strict reports do not fail the warning:\n%s\n%s", text, junit)
	}
}

// TestUnsupportedAreasAreNotRun: a target serving no batches (501) that
// declares so gets every check needing batches reported unsupported,
// none run (none fails), in the text and JUnit reports.
func TestUnsupportedAreasAreNotRun(t *testing.T) {
	base := testgateway.Quickstart(t, "")
	target := brokenTarget(t, base, fault{intercept: func(_ *faultState, r *http.Request, _ []byte) (int, string, bool) {
		if strings.HasPrefix(r.URL.Path, "/v1/batches") {
			return http.StatusNotImplemented, `{"error":{"message":"not implemented","type":"not_implemented","param":null,"code":null}}`, true
		}
		return 0, "", false
	}})
	areas := []string{conformance.AreaBatches, conformance.AreaFiles}
	report, err := conformance.Run(context.Background(), conformance.Config{BaseURL: target, APIKey: devKey, Areas: areas, MaxCases: 2, Unsupported: []string{conformance.AreaBatches}})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, ch := range conformance.Checks() {
		if ch.Area == conformance.AreaBatches && !slices.ContainsFunc(ch.Requires, func(a string) bool { return !slices.Contains(areas, a) }) {
			want = append(want, ch.ID)
		}
	}
	var unsupported []string
	for _, res := range report.Results {
		switch res.Status {
		case conformance.Unsupported:
			unsupported = append(unsupported, res.ID)
		case conformance.Fail:
			t.Errorf("%s failed: %+v", res.ID, res.Evidence)
		}
	}
	if !slices.Equal(unsupported, want) || len(want) == 0 {
		t.Errorf("unsupported %v, want %v", unsupported, want)
	}
	var text, junit strings.Builder
	report.WriteText(&text)
	report.WriteJUnit(&junit)
	if !strings.Contains(text.String(), "UNSUP batches.lifecycle\n        reason: the target declares it does not serve batches") || !strings.Contains(junit.String(), `<skipped message="unsupported: the target declares it does not serve batches">`) {
		t.Errorf("reports do not show the unsupported checks:\n%s\n%s", text.String(), junit.String())
	}
}
