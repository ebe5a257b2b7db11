package vectorstores

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
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
