package local

import (
	"strconv"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// listQuery reads limit, order and after from a list request's query.
func listQuery(c *upstreams.Call, defaultLimit, maxLimit int) (store.ListQuery, error) {
	v := c.Request.URL.Query()
	q := store.ListQuery{Limit: defaultLimit, Desc: true, After: v.Get("after")}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxLimit {
			return q, upstreams.InvalidRequest("limit", "limit must be an integer between 1 and %d.", maxLimit)
		}
		q.Limit = n
	}
	switch v.Get("order") {
	case "", "desc":
	case "asc":
		q.Desc = false
	default:
		return q, upstreams.InvalidRequest("order", "order must be asc or desc.")
	}
	return q, nil
}

// page is the public list shape; first_id and last_id are null on an
// empty page and has_more is always present.
type page[T any] struct {
	Object  string  `json:"object"`
	Data    []T     `json:"data"`
	FirstID *string `json:"first_id"`
	LastID  *string `json:"last_id"`
	HasMore bool    `json:"has_more"`
}

func listPage[T any](data []T, hasMore bool, id func(T) string) page[T] {
	p := page[T]{Object: "list", Data: data, HasMore: hasMore}
	if len(data) > 0 {
		first, last := id(data[0]), id(data[len(data)-1])
		p.FirstID, p.LastID = &first, &last
	}
	return p
}
