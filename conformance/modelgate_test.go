package conformance_test

import (
	"context"
	"flag"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/conformance"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// devKey is the quick start's development key.
const devKey = testgateway.QuickstartDevKey

// streamInterval paces the reference engine's streams (pacedEngine), so
// the suite can tell a stream held back from a fast one.
const streamInterval = 20 * time.Millisecond

// pacedEngine routes chat completions to a reference engine spacing its
// stream events streamInterval apart.
const pacedEngine = "\t\tupstream paced reference {\n\t\t\tstream_interval 20ms\n\t\t}\n\t\troute chat.completions.create to paced\n"

// secondKey is a key of another owner, for the isolation checks.
const secondKey = "sk-conformance-second-owner"

// secondOwner declares secondKey in the quick start's modelgate block.
const secondOwner = "\t\tkey " + secondKey + " {\n\t\t\tname second\n\t\t\towner conformance-second\n\t\t}\n"

// implementedAreas are the areas modelgate's main branch serves.
var implementedAreas = []string{conformance.AreaAuth, conformance.AreaErrors, conformance.AreaLimits, conformance.AreaChat, conformance.AreaFiles, conformance.AreaThreads, conformance.AreaBatches, conformance.AreaVectorStores, conformance.AreaResponses, conformance.AreaEmbeddings, conformance.AreaConversations}

// updateFields rewrites fieldcoverage.json from the run.
var updateFields = flag.Bool("update-fields", false, "rewrite fieldcoverage.json (the catalogue's response fields) from TestSuitePassesAgainstModelgate")

func TestSuitePassesAgainstModelgate(t *testing.T) {
	base := testgateway.Quickstart(t, secondOwner+pacedEngine)
	var runs [][]conformance.FieldCoverage
	for _, profile := range []string{conformance.ProfileSpec, conformance.ProfileOpenAI} {
		t.Run(profile, func(t *testing.T) { runs = append(runs, suitePasses(t, base, profile)) })
	}
	if len(runs) == 2 {
		expectMeasuredFields(t, unionFields(runs[0], runs[1]))
	}
}

// maxCases bounds the generated cases: all of the default in one
// profile, a few in the other (they differ only in shapes both hold).
var maxCases = map[string]int{conformance.ProfileSpec: 40, conformance.ProfileOpenAI: 8}

// suitePasses runs every implemented area with the profile: its beta
// header name, and the search-response dialect modelgate picks from it.
func suitePasses(t *testing.T, base, profile string) []conformance.FieldCoverage {
	report, err := conformance.Run(context.Background(), conformance.Config{BaseURL: base, APIKey: devKey, SecondAPIKey: secondKey, ExpectStreamInterval: streamInterval, Areas: implementedAreas, Profile: profile, MaxCases: maxCases[profile]})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	report.WriteText(&text)
	t.Logf("suite against modelgate (%s profile): %d checks in %d ms", profile, len(report.Results), report.ElapsedMS)
	if report.Count(conformance.Fail) > 0 || report.Count(conformance.Pass) == 0 || len(report.Results) < 100 {
		t.Fatalf("the suite does not pass against modelgate:\n%s", text.String())
	}
	for _, res := range report.Results {
		if res.Status == conformance.Skip {
			t.Logf("skipped %s: %s", res.ID, res.Reason)
		}
	}
	expectCoverage(t, report)
	for _, f := range report.Coverage.Fields {
		t.Logf("fields of %s %s (%s): %d/%d in %d replies", f.Method, f.Path, f.Operation, f.Covered, f.Total, f.Replies)
	}
	return report.Coverage.Fields
}

// expectCoverage holds a whole run's coverage: every operation answered,
// its 2xx and a 4xx seen, every observable sentence exercised, and the
// matrix in the text and JUnit reports.
func expectCoverage(t *testing.T, report *conformance.Report) {
	c := report.Coverage
	for _, o := range c.Operations {
		if !slices.ContainsFunc(o.Statuses, func(s int) bool { return s >= 200 && s < 300 }) || !slices.ContainsFunc(o.Statuses, func(s int) bool { return s >= 400 && s < 500 }) {
			t.Errorf("operation %s: statuses %v, want a 2xx and a 4xx", o.Operation, o.Statuses)
		}
	}
	for _, s := range c.Sentences {
		// The openai profile holds no search to the beta header.
		if s.State == "not exercised" && (report.Profile == conformance.ProfileSpec || s.ID != "spec.search.beta") {
			t.Errorf("sentence %s not exercised", s.ID)
		}
	}
	var text, junit strings.Builder
	report.WriteText(&text)
	report.WriteJUnit(&junit)
	for _, want := range []string{"== coverage", "      max_num_results            200 400", "== spec sentences: "} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text report lacks %q", want)
		}
	}
	for _, want := range []string{`<testsuite name="conformance.coverage.operations"`, `<testcase name="vector_stores.search" classname="conformance.coverage.operations">`, `<testsuite name="conformance.coverage.sentences"`} {
		if !strings.Contains(junit.String(), want) {
			t.Errorf("the JUnit report lacks %q", want)
		}
	}
}

// TestHeavyProbesAgainstModelgate runs the probes --heavy adds (batch
// input files of 50,000 and 50,001 requests) against the quick start.
func TestHeavyProbesAgainstModelgate(t *testing.T) {
	base := testgateway.Quickstart(t, "")
	report, err := conformance.Run(context.Background(), conformance.Config{BaseURL: base, APIKey: devKey, Heavy: true, Only: []string{"limits.batches.input-requests"}})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	report.WriteText(&text)
	if len(report.Results) != 1 || report.Count(conformance.Pass) != 1 {
		t.Fatalf("heavy probes:\n%s", text.String())
	}
	t.Logf("heavy probes in %d ms", report.ElapsedMS)
}
