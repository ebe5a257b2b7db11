package conformance

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Ordering: a list sorts by created_at, newest first by default and
// oldest first with order=asc, and pages the same way with either cursor.
// created_at is in seconds, so the objects are made a second apart: ties
// would let any order pass.

const specOrder = "List vector store files: sort order by `created_at`, `asc` or `desc` (default desc); two pagination cursors. (Public API: files, vector stores and vector store files list with `order` asc|desc (d=desc) and the `after` cursor, vector stores and their files with `before` too.)"

// spaced makes n objects with create, a second apart, and returns their IDs
// in creation order.
func (t *T) spaced(n int, create func(i int) string) []string {
	ids := make([]string, 0, n)
	for i := range n {
		if i > 0 {
			select {
			case <-t.ctx.Done():
				t.fatal(Evidence{Expected: "the run to go on", Seen: t.ctx.Err().Error()})
			case <-time.After(1100 * time.Millisecond):
			}
		}
		ids = append(ids, create(i))
	}
	return ids
}

// expectOrder lists in the default order, asc and desc, and after each of
// the objects ids (oldest first, created a second apart) as the cursor,
// and, where the list has it, before the newest and the oldest: the
// objects must come in created_at order every time. Other objects may be
// listed among them (other checks make and delete theirs meanwhile), so
// only the objects' own order is held, and only they serve as cursors.
func (t *T) expectOrder(op, path string, query url.Values, beta, before bool, ids []string) {
	limit := "100"
	if op == "files.list" {
		limit = "10000" // every file of the owner, on one page
	}
	reversed := slices.Clone(ids)
	slices.Reverse(reversed)
	n := len(ids)
	list := func(q url.Values) ([]string, *exchange) {
		for k, v := range query {
			q[k] = v
		}
		q.Set("limit", limit)
		ex := t.do(request{op: op, method: http.MethodGet, path: path, query: q, beta: beta})
		if !t.expectStatus(ex, http.StatusOK) {
			return nil, ex
		}
		var page listPage
		t.decode(ex, &page)
		items := make([]*listItem, len(page.Data))
		for i := range page.Data {
			items[i] = &page.Data[i]
		}
		return mine(items, ids), ex
	}
	for _, order := range []string{"", "asc", "desc"} {
		want := reversed
		if order == "asc" {
			want = ids
		}
		for i := -1; i < n-1; i++ {
			q := url.Values{}
			if order != "" {
				q.Set("order", order)
			}
			what := "order " + orderName(order)
			if i >= 0 {
				q.Set("after", want[i])
				what += " after " + want[i]
			}
			got, ex := list(q)
			t.expect(slices.Equal(got, want[i+1:]), ex, what+": "+strings.Join(want[i+1:], ","), "%s", strings.Join(got, ","))
		}
	}
	if !before {
		return
	}
	for _, c := range []struct {
		order, cursor string
		want          []string
	}{
		{"asc", ids[n-1], ids[:n-1]},
		{"desc", ids[0], reversed[:n-1]},
	} {
		got, ex := list(url.Values{"order": {c.order}, "before": {c.cursor}})
		t.expect(slices.Equal(got, c.want), ex, fmt.Sprintf("order %s before %s: %s", c.order, c.cursor, strings.Join(c.want, ",")), "%s", strings.Join(got, ","))
	}
}

func orderName(order string) string {
	if order == "" {
		return "default (desc)"
	}
	return order
}

// mine keeps the IDs of items among ids, in list order.
func mine(items []*listItem, ids []string) []string {
	var out []string
	for _, it := range items {
		if slices.Contains(ids, it.ID) {
			out = append(out, it.ID)
		}
	}
	return out
}

var orderChecks = []Check{
	{ID: "files.list.order", Area: AreaFiles, Spec: specOrder,
		run: func(t *T) {
			ids := t.spaced(2, func(i int) string {
				return t.upload(fmt.Sprintf("order-%d.txt", i), "assistants", []byte("ordered file"))
			})
			t.expectOrder("files.list", "/v1/files", url.Values{"purpose": {"assistants"}}, false, false, ids)
		}},
	{ID: "vector_stores.list.order", Area: AreaVectorStores, Spec: specOrder,
		run: func(t *T) {
			ids := t.spaced(2, func(int) string { return t.newVectorStore() })
			t.expectOrder("vector_stores.list", "/v1/vector_stores", nil, true, true, ids)
		}},
	{ID: "vector_stores.files.list.order", Area: AreaVectorStores, Spec: specOrder,
		run: func(t *T) {
			vs := t.newVectorStore()
			ids := t.spaced(2, func(i int) string {
				id := t.upload(fmt.Sprintf("ordered-%d.txt", i), "assistants", []byte(searchDocs[i]))
				t.requireStatus(t.attach(vs, id, nil), http.StatusOK)
				return id
			})
			t.expectOrder("vector_stores.files.list", "/v1/vector_stores/"+vs+"/files", nil, true, true, ids)
		}},
}
