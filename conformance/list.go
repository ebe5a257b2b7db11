package conformance

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// listItem is what paging reads of each listed object.
type listItem struct {
	ID        string `json:"id"`
	CreatedAt int64  `json:"created_at"`
}

type listPage struct {
	Object  string     `json:"object"`
	Data    []listItem `json:"data"`
	FirstID *string    `json:"first_id"`
	LastID  *string    `json:"last_id"`
	HasMore *bool      `json:"has_more"`
}

// maxPages bounds a paging walk, so a target whose has_more never ends
// fails the check instead of running it forever.
const maxPages = 200

// maxWalks bounds how often pageAll starts a walk again because another
// client deleted its cursor object mid-walk.
const maxWalks = 4

// pageAll walks a cursor-paged list with `limit` and `after`, holding every
// page to the list rules (no more than limit items, a full page when
// has_more, first_id and last_id naming the ends, created_at ordered), and
// returns every item in order.
//
// Checks run at once on one key, and some delete objects another check's
// walk is paging through. A walk whose `after` names an object deleted
// since its page was read may end there (the public API does not say what
// an unknown cursor yields), so a walk that ends on an empty page is
// started again when its cursor object is gone (404), at most maxWalks
// times; a cursor object still there makes the empty page the list's end.
func (t *T) pageAll(op, path string, query url.Values, beta bool) []*listItem {
	for range maxWalks - 1 {
		all, cursor := t.walk(op, path, query, beta)
		if cursor == "" || t.do(request{method: http.MethodGet, path: path + "/" + url.PathEscape(cursor), beta: beta}).status != http.StatusNotFound {
			return all
		}
	}
	all, _ := t.walk(op, path, query, beta)
	return all
}

// walk is one paging walk of pageAll: every item in order and, when the
// walk ended on an empty page past a cursor, that cursor.
func (t *T) walk(op, path string, query url.Values, beta bool) (all []*listItem, emptyAfter string) {
	limit, _ := strconv.Atoi(query.Get("limit"))
	desc := query.Get("order") != "asc"
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	for range maxPages {
		ex := t.do(request{op: op, method: http.MethodGet, path: path, query: q, beta: beta})
		t.requireStatus(ex, http.StatusOK)
		var p listPage
		t.decode(ex, &p)
		if p.HasMore == nil {
			t.fatal(ex.evidence("has_more in every list page", "no has_more"))
		}
		t.expect(p.Object == "list", ex, `object "list"`, "%q", p.Object)
		if limit > 0 {
			t.expect(len(p.Data) <= limit, ex, fmt.Sprintf("at most limit=%d items", limit), "%d", len(p.Data))
			t.expect(!*p.HasMore || len(p.Data) == limit, ex, fmt.Sprintf("a full page of %d when has_more is true", limit), "%d items", len(p.Data))
		}
		if n := len(p.Data); n > 0 {
			t.expect(p.FirstID != nil && *p.FirstID == p.Data[0].ID, ex, "first_id "+p.Data[0].ID, "%s", jsonText(p.FirstID))
			t.expect(p.LastID != nil && *p.LastID == p.Data[n-1].ID, ex, "last_id "+p.Data[n-1].ID, "%s", jsonText(p.LastID))
		}
		for i := range p.Data {
			item := &p.Data[i]
			if prev := len(all) - 1; prev >= 0 {
				before := all[prev].CreatedAt
				t.expect((desc && item.CreatedAt <= before) || (!desc && item.CreatedAt >= before), ex, "items sorted by created_at, order "+map[bool]string{true: "desc", false: "asc"}[desc], "%s (%d) after %s (%d)", item.ID, item.CreatedAt, all[prev].ID, before)
			}
			all = append(all, item)
		}
		if !*p.HasMore {
			if len(p.Data) == 0 {
				return all, q.Get("after")
			}
			return all, ""
		}
		if len(p.Data) == 0 {
			t.fatal(ex.evidence("items on a page with has_more true", "an empty page"))
		}
		q.Set("after", p.Data[len(p.Data)-1].ID)
	}
	t.fatal(Evidence{Request: "GET " + path, Expected: fmt.Sprintf("the list to end within %d pages", maxPages), Seen: "has_more still true"})
	return nil, ""
}

// expectListed holds a walk to list each of ids exactly once (pageAll
// holds the order) and none of absent.
func (t *T) expectListed(items []*listItem, ids []string, absent ...string) {
	at := map[string][]int{}
	for i, it := range items {
		at[it.ID] = append(at[it.ID], i)
	}
	ev := Evidence{Request: "paging walk", Response: fmt.Sprintf("%d items", len(items))}
	for _, id := range ids {
		if n := len(at[id]); n != 1 {
			ev.Expected, ev.Seen = id+" listed exactly once", fmt.Sprintf("%d times", n)
			t.fail(ev)
		}
	}
	for _, id := range absent {
		if len(at[id]) > 0 {
			ev.Expected, ev.Seen = id+" not listed", "listed"
			t.fail(ev)
		}
	}
}
