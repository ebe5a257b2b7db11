package vectorstores

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/upstreams"
)

// TestQueryTermsAreBounded: a query's keywords are distinct and at most
// maxQueryTerms (the 64th kept, the 65th ignored); a request holds at most
// maxQueries query strings (16 pass, 17 refused naming query).
func TestQueryTermsAreBounded(t *testing.T) {
	var long []string
	for i := range 1000 {
		long = append(long, fmt.Sprintf("term%d term%d", i, i))
	}
	got := keywords(strings.Join(long, " "))
	if len(got) != maxQueryTerms || got[0] != "term0" || got[maxQueryTerms-1] != fmt.Sprintf("term%d", maxQueryTerms-1) {
		t.Fatalf("%d keywords, first %q, last %q", len(got), got[0], got[len(got)-1])
	}
	if got := keywords("the river the river Thames"); strings.Join(got, " ") != "river thames" {
		t.Fatalf("keywords %q", got)
	}
	for _, n := range []int{maxQueries, maxQueries + 1} {
		qs := make([]string, n)
		for i := range qs {
			qs[i] = "q"
		}
		raw, _ := json.Marshal(qs)
		_, err := (&SearchRequest{Query: raw}).Queries()
		if (err == nil) != (n == maxQueries) {
			t.Fatalf("%d queries: %v", n, err)
		}
	}
}

// TestFilterTermsAreBounded: a filter of maxFilterTerms terms (compounds,
// comparisons and listed values together, at any depth) is taken, one
// more is refused naming filters, and a list of a million values is
// refused without being counted to its end.
func TestFilterTermsAreBounded(t *testing.T) {
	list := func(n int) []any {
		values := make([]any, n)
		for i := range values {
			values[i] = fmt.Sprint(i)
		}
		return values
	}
	// An and of two: an in list, and a chain of nested ors.
	filter := func(listed, nested int) *searchFilter {
		chain := &searchFilter{Type: "eq", Key: "k", Value: "v"}
		for range nested {
			chain = &searchFilter{Type: "or", Filters: []*searchFilter{chain}}
		}
		return &searchFilter{Type: "and", Filters: []*searchFilter{{Type: "in", Key: "file_id", Value: list(listed)}, chain}}
	}
	// and + in + its values + the chain's ors + eq.
	for _, c := range []struct {
		listed, nested int
		ok             bool
	}{
		{maxFilterTerms - 3 - 100, 100, true},
		{maxFilterTerms - 3 - 100, 101, false},
		{0, maxFilterTerms - 3, true},
		{1, maxFilterTerms - 3, false},
		{1_000_000, 0, false},
	} {
		err := (&SearchRequest{Filters: filter(c.listed, c.nested)}).CheckFilters()
		if (err == nil) != c.ok {
			t.Fatalf("%d listed values, %d nested ors: %v", c.listed, c.nested, err)
		}
		if apiErr, ok := err.(*upstreams.Error); err != nil && (!ok || apiErr.Param != "filters" || apiErr.Status != 400) {
			t.Fatalf("refusal %+v", err)
		}
	}
	if err := (&SearchRequest{}).CheckFilters(); err != nil {
		t.Fatalf("no filter: %v", err)
	}
}
