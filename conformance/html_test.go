package conformance_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/conformance"
	"github.com/modelgate/modelgate/internal/testbrowser"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestHTMLReportInChromium writes the HTML report of a run that found
// failures and opens the file, with no server, in a real headless
// Chromium: it renders the summary, one section per failed check with its
// evidence, the coverage matrix; it logs no console error (its CSP would
// report any asset it tried to load); its screenshot is not blank; and
// dark mode changes its colours.
func TestHTMLReportInChromium(t *testing.T) {
	base := testgateway.Quickstart(t, "")
	f := faultNamed(t, "filename spaces rewritten")
	report, err := conformance.Run(context.Background(), conformance.Config{BaseURL: brokenTarget(t, base, f), APIKey: devKey, Areas: f.areas, MaxCases: 4})
	if err != nil {
		t.Fatal(err)
	}
	failed := report.Count(conformance.Fail)
	if failed == 0 {
		t.Fatal("the broken target failed no check")
	}
	path := filepath.Join(t.TempDir(), "report.html")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := report.WriteHTML(out); err != nil {
		t.Fatal(err)
	}
	out.Close()

	b := testbrowser.Start(t, nil)
	b.Open("file://" + path)
	if h1 := b.Text("h1"); !strings.HasPrefix(h1, "Conformance of") {
		t.Errorf("heading %q", h1)
	}
	if got := b.Text("#failed"); got != strconv.Itoa(failed) {
		t.Errorf("summary shows %s failed, the report has %d", got, failed)
	}
	if n := testbrowser.Eval[int](b, `document.querySelectorAll("section.failure").length`); n != failed {
		t.Errorf("%d failure sections, want %d", n, failed)
	}
	section := b.Text(`section[id="fail-files.round-trip"]`)
	for _, want := range []string{"files.round-trip", "Spec:", "request", "response", "expected", "seen", "report - final v2.txt", "report_-_final_v2.txt"} {
		if !strings.Contains(section, want) {
			t.Errorf("the failure of files.round-trip lacks %q:\n%s", want, section)
		}
	}
	if rows := testbrowser.Eval[int](b, `document.querySelectorAll("#coverage tr").length`); rows < 20 {
		t.Errorf("coverage matrix of %d rows", rows)
	}
	if errs := b.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	if err := testbrowser.CheckNotBlank(b.Screenshot(), 0.01); err != nil {
		t.Error(err)
	}
	light := testbrowser.Eval[string](b, `getComputedStyle(document.body).backgroundColor`)
	b.EmulateDarkMode(true)
	dark := testbrowser.Eval[string](b, `getComputedStyle(document.body).backgroundColor`)
	if light != "rgb(255, 255, 255)" || dark != "rgb(13, 17, 23)" {
		t.Errorf("background light %s, dark %s", light, dark)
	}
	if err := testbrowser.CheckNotBlank(b.Screenshot(), 0.01); err != nil {
		t.Errorf("dark mode: %v", err)
	}
}
