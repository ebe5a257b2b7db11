package modelgate

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/modelgate/modelgate/upstreams"
)

// maxListPages bounds the provider pages one filtered list reads: a list
// whose owner's objects are not among that many pages of the provider's
// (of 100 objects each after the first) ends there, with has_more true.
const maxListPages = 10

// providerList is a provider's list page.
type providerList struct {
	Data    []json.RawMessage `json:"data"`
	HasMore bool              `json:"has_more"`
	LastID  *string           `json:"last_id"`
}

// filterList answers a provider list with the caller's objects only: it
// reads the provider's pages (the next with `after` the last ID of the
// one before, 100 at a time) until it holds the page size the client
// asked for, the provider has no more, or maxListPages. first_id and
// last_id are those of the objects kept, so the client's next page
// (after its own last ID) goes on where this one stopped.
func (g *Gateway) filterList(f upstreams.Forwarder, call *upstreams.Call, resp *http.Response, kind string) (*http.Response, error) {
	ctx, owner := call.Request.Context(), call.Principal.Owner
	query := call.Request.URL.Query()
	limit, err := strconv.Atoi(query.Get("limit"))
	if err != nil || limit < 1 {
		limit = 20
	}
	// A page before a cursor is read once: its objects end at the cursor.
	pages := maxListPages
	if query.Get("before") != "" {
		pages = 1
	}
	var kept []json.RawMessage
	var keptObjs []ownedObject
	hasMore := false
	for page := 0; ; page++ {
		unread := resp.Body
		body, err := g.readReply(resp)
		unread.Close()
		if err != nil {
			return nil, err
		}
		var list providerList
		if err := json.Unmarshal(body, &list); err != nil {
			return nil, &upstreams.Error{Status: http.StatusBadGateway, Type: upstreams.TypeServer, Code: "upstream_nonconforming",
				Message: "The upstream answered a list with no data array."}
		}
		objs := make([]ownedObject, len(list.Data))
		ids := make([]string, len(list.Data))
		for i, d := range list.Data {
			_ = json.Unmarshal(d, &objs[i])
			ids[i] = objs[i].ID
		}
		owned, err := g.ledger.OwnedAmong(ctx, owner, kind, ids)
		if err != nil {
			return nil, err
		}
		hasMore = list.HasMore
		for i, d := range list.Data {
			if !owned[ids[i]] {
				continue
			}
			if len(kept) == limit {
				hasMore = true
				break
			}
			kept = append(kept, d)
			keptObjs = append(keptObjs, objs[i])
		}
		if len(kept) == limit || !list.HasMore || list.LastID == nil || page+1 == pages {
			break
		}
		next := *call
		next.Request = call.Request.Clone(ctx)
		q := next.Request.URL.Query()
		q.Set("after", *list.LastID)
		q.Set("limit", "100")
		next.Request.URL.RawQuery = q.Encode()
		if resp, err = f.Forward(&next); err != nil {
			return nil, err
		}
		if resp.StatusCode >= 300 {
			return resp, nil
		}
	}
	if kind == kindBatch {
		if err := g.recordBatchFiles(ctx, owner, keptObjs); err != nil {
			return nil, err
		}
	}
	out := struct {
		Object  string            `json:"object"`
		Data    []json.RawMessage `json:"data"`
		FirstID *string           `json:"first_id"`
		LastID  *string           `json:"last_id"`
		HasMore bool              `json:"has_more"`
	}{Object: "list", Data: kept, HasMore: hasMore}
	if kept == nil {
		out.Data = []json.RawMessage{}
	} else {
		out.FirstID, out.LastID = &keptObjs[0].ID, &keptObjs[len(keptObjs)-1].ID
	}
	body, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	filtered := &http.Response{StatusCode: resp.StatusCode, Header: resp.Header.Clone(), Body: io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body))}
	filtered.Header.Del("Content-Length")
	return filtered, nil
}
