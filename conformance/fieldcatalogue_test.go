package conformance_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/conformance"
)

// unionFields merges two runs' field coverage: a field is covered when
// either run showed it.
func unionFields(a, b []conformance.FieldCoverage) []conformance.FieldCoverage {
	out := slices.Clone(a)
	for i := range out {
		j := slices.IndexFunc(b, func(r conformance.FieldCoverage) bool { return r.Operation == out[i].Operation })
		if j < 0 {
			continue
		}
		out[i].Replies += b[j].Replies
		out[i].Unchecked = slices.DeleteFunc(slices.Clone(out[i].Unchecked), func(f string) bool { return !slices.Contains(b[j].Unchecked, f) })
		out[i].Covered = out[i].Total - len(out[i].Unchecked)
	}
	return out
}

// expectMeasuredFields holds a run's field coverage to the catalogue's
// (fieldcoverage.json): every field it says is covered still is, every
// operation it lists still is there; with -update-fields it rewrites it.
func expectMeasuredFields(t *testing.T, rows []conformance.FieldCoverage) {
	if *updateFields {
		f, err := os.Create("fieldcoverage.json")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := conformance.WriteFieldCoverageJSON(f, rows); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, want := range conformance.MeasuredFields() {
		i := slices.IndexFunc(rows, func(r conformance.FieldCoverage) bool { return r.Operation == want.Operation })
		if i < 0 {
			t.Errorf("%s: in fieldcoverage.json, not in the run's matrix", want.Operation)
			continue
		}
		for _, f := range rows[i].Unchecked {
			if !slices.Contains(want.Unchecked, f) {
				t.Errorf("%s: %s is covered by fieldcoverage.json, unchecked in this run", want.Operation, f)
			}
		}
		if rows[i].Covered > want.Covered {
			t.Logf("%s: %d fields covered, fieldcoverage.json says %d: rerun with -update-fields", want.Operation, rows[i].Covered, want.Covered)
		}
	}
}

// TestFieldCatalogue: `conformance list` shows, per operation of the
// surface, the fields covered of the total and why each other one is
// unchecked, and every invariant family with its checks.
func TestFieldCatalogue(t *testing.T) {
	rows := conformance.MeasuredFields()
	if len(rows) < 20 {
		t.Fatalf("fieldcoverage.json has %d operations", len(rows))
	}
	var again strings.Builder
	if err := conformance.WriteFieldCoverageJSON(&again, rows); err != nil {
		t.Fatal(err)
	}
	if file, err := os.ReadFile("fieldcoverage.json"); err != nil || string(file) != again.String() {
		t.Errorf("fieldcoverage.json is not as -update-fields writes it (%v)", err)
	}
	var b strings.Builder
	if err := conformance.WriteCatalogue(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, r := range rows {
		if r.Covered+len(r.Unchecked) != r.Total {
			t.Errorf("%s: %d covered and %d unchecked of %d", r.Operation, r.Covered, len(r.Unchecked), r.Total)
		}
		if !strings.Contains(out, r.Operation+"\t"+r.Method+" "+r.Path+"\t") {
			t.Errorf("the catalogue lacks the fields of %s", r.Operation)
		}
	}
	for _, f := range conformance.Families() {
		checks := conformance.FamilyChecks(f)
		if !slices.ContainsFunc(checks, func(id string) bool { return strings.HasPrefix(id, "invariant."+f.Name+".") }) {
			t.Errorf("family %s has no check of its own: %v", f.Name, checks)
		}
		if !strings.Contains(out, f.Name+"\t"+f.Summary+"\t") {
			t.Errorf("the catalogue lacks the family %s", f.Name)
		}
	}
	for _, want := range []string{"\tchoices[].message.audio\taudio output", "# invariant families"} {
		if !strings.Contains(out, want) {
			t.Errorf("the catalogue lacks %q", want)
		}
	}
}
