package vectorstores

import (
	"fmt"
	"sort"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/internal/gatewaytest"
)

// Vector store search filters as openai-go builds them, and the check of
// every operator that TestVectorStoresEndToEnd runs on its corpus.

func cmpFilter(op, key string, v any) openai.VectorStoreSearchParamsFiltersUnion {
	return openai.VectorStoreSearchParamsFiltersUnion{OfComparisonFilter: comparison(op, key, v)}
}

func comparison(op, key string, v any) *shared.ComparisonFilterParam {
	var val shared.ComparisonFilterValueUnionParam
	switch v := v.(type) {
	case string:
		val.OfString = openai.String(v)
	case float64:
		val.OfFloat = openai.Float(v)
	case bool:
		val.OfBool = openai.Bool(v)
	case []string:
		for _, s := range v {
			val.OfComparisonFilterValueArray = append(val.OfComparisonFilterValueArray, shared.ComparisonFilterValueArrayItemUnionParam{OfString: openai.String(s)})
		}
	}
	return &shared.ComparisonFilterParam{Type: shared.ComparisonFilterType(op), Key: key, Value: val}
}

func compound(op string, filters ...shared.CompoundFilterFilterUnionParam) *shared.CompoundFilterParam {
	return &shared.CompoundFilterParam{Type: shared.CompoundFilterType(op), Filters: filters}
}

// checkFilters searches the common term under each operator and checks
// exactly the matching files come back.
func checkFilters(t *testing.T, client openai.Client, storeID string, byID map[string]corpusFile) {
	t.Helper()
	kind := func(f corpusFile) string { return f.attrs["kind"].(string) }
	year := func(f corpusFile) float64 { return f.attrs["year"].(float64) }
	var someID string
	for id, f := range byID {
		if f.name == "main.go" {
			someID = id
		}
	}
	cases := []struct {
		name   string
		filter openai.VectorStoreSearchParamsFiltersUnion
		want   func(id string, f corpusFile) bool
	}{
		{"eq", cmpFilter("eq", "kind", "data"), func(_ string, f corpusFile) bool { return kind(f) == "data" }},
		{"ne", cmpFilter("ne", "kind", "data"), func(_ string, f corpusFile) bool { return kind(f) != "data" }},
		{"gt", cmpFilter("gt", "year", 2023.0), func(_ string, f corpusFile) bool { return year(f) > 2023 }},
		{"gte", cmpFilter("gte", "year", 2023.0), func(_ string, f corpusFile) bool { return year(f) >= 2023 }},
		{"lt", cmpFilter("lt", "year", 2023.0), func(_ string, f corpusFile) bool { return year(f) < 2023 }},
		{"lte", cmpFilter("lte", "year", 2022.0), func(_ string, f corpusFile) bool { return year(f) <= 2022 }},
		{"in", cmpFilter("in", "kind", []string{"code", "memo"}), func(_ string, f corpusFile) bool { return kind(f) == "code" || kind(f) == "memo" }},
		{"nin", cmpFilter("nin", "kind", []string{"code", "memo"}), func(_ string, f corpusFile) bool { return kind(f) != "code" && kind(f) != "memo" }},
		{"bool", cmpFilter("eq", "public", false), func(_ string, f corpusFile) bool { return !f.attrs["public"].(bool) }},
		{"file_id", cmpFilter("eq", "file_id", someID), func(id string, _ corpusFile) bool { return id == someID }},
		{"and", openai.VectorStoreSearchParamsFiltersUnion{OfCompoundFilter: compound("and",
			shared.CompoundFilterFilterUnionParam{OfComparison: comparison("eq", "public", true)},
			shared.CompoundFilterFilterUnionParam{OfComparison: comparison("gte", "year", 2022.0)})},
			func(_ string, f corpusFile) bool { return f.attrs["public"].(bool) && year(f) >= 2022 }},
		{"nested", openai.VectorStoreSearchParamsFiltersUnion{OfCompoundFilter: compound("or",
			shared.CompoundFilterFilterUnionParam{OfComparison: comparison("eq", "kind", "web")},
			shared.CompoundFilterFilterUnionParam{OfFilter: compound("and",
				shared.CompoundFilterFilterUnionParam{OfComparison: comparison("eq", "kind", "data")},
				shared.CompoundFilterFilterUnionParam{OfComparison: comparison("lt", "year", 2025.0)})})},
			func(_ string, f corpusFile) bool { return kind(f) == "web" || (kind(f) == "data" && year(f) < 2025) }},
	}
	for _, c := range cases {
		res := gatewaytest.Search(t, client, storeID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("modelgate"), MaxNumResults: openai.Int(50), Filters: c.filter})
		var got, want []string
		for _, r := range res {
			got = append(got, byID[r.FileID].name)
		}
		for id, f := range byID {
			if c.want(id, f) {
				want = append(want, f.name)
			}
		}
		sort.Strings(got)
		sort.Strings(want)
		if len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("filter %s: got %v, want %v", c.name, got, want)
		}
	}
}
