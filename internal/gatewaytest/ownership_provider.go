package gatewaytest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// ObjectsProvider is a provider keeping objects of every kind in memory
// for one API key (the gateway's): a POST to a collection creates one, a
// GET retrieves or lists them (after and limit honoured), a DELETE
// answers deleted but keeps the object, so that only the gateway's own
// answer can tell that it is gone. A batch comes with an output file the
// provider made itself.
type ObjectsProvider struct {
	mu      sync.Mutex
	seq     int
	Objects map[string]map[string]any
	order   []string
	Served  int
}

// CollectionPrefixes are the ID prefixes ObjectsProvider gives objects of
// each collection.
var CollectionPrefixes = map[string]string{"responses": "resp_", "files": "file-", "vector_stores": "vs_", "batches": "batch_", "conversations": "conv_"}

func (p *ObjectsProvider) create(collection string, fields map[string]any) map[string]any {
	p.seq++
	obj := map[string]any{"id": fmt.Sprintf("%s%d", CollectionPrefixes[collection], p.seq), "object": strings.TrimSuffix(collection, "s"), "created_at": 1}
	for k, v := range fields {
		obj[k] = v
	}
	p.Objects[obj["id"].(string)] = obj
	p.order = append(p.order, obj["id"].(string))
	return obj
}

// ServeHTTP answers the OpenAI object endpoints from the provider's objects.
func (p *ObjectsProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Served++
	segs := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/"), "/")
	collection := segs[0]
	write := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	switch {
	case r.Method == http.MethodPost && len(segs) == 1:
		body, _ := io.ReadAll(r.Body)
		fields := map[string]any{}
		if collection == "batches" {
			fields["output_file_id"] = p.create("files", nil)["id"]
		}
		obj := p.create(collection, fields)
		if strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			created, _ := json.Marshal(obj)
			fmt.Fprintf(w, "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":%s}\n\n", created)
			fmt.Fprintf(w, "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":1,\"response\":%s}\n\n", created)
			return
		}
		write(obj)
	case r.Method == http.MethodGet && len(segs) == 1:
		limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
		if err != nil {
			limit = 20
		}
		after := r.URL.Query().Get("after")
		data := []any{}
		more := false
		for _, id := range p.order {
			if after != "" {
				after = map[bool]string{true: "", false: after}[id == after]
				continue
			}
			if obj := p.Objects[id]; strings.HasPrefix(id, CollectionPrefixes[collection]) {
				if len(data) == limit {
					more = true
					break
				}
				data = append(data, obj)
			}
		}
		list := map[string]any{"object": "list", "data": data, "has_more": more, "first_id": nil, "last_id": nil}
		if len(data) > 0 {
			list["first_id"], list["last_id"] = data[0].(map[string]any)["id"], data[len(data)-1].(map[string]any)["id"]
		}
		write(list)
	case p.Objects[segs[1]] == nil:
		w.WriteHeader(http.StatusNotFound)
		write(map[string]any{"error": map[string]any{"message": "provider: no such object", "type": "invalid_request_error", "param": nil, "code": nil}})
	case r.Method == http.MethodDelete && len(segs) == 2:
		write(map[string]any{"id": segs[1], "object": p.Objects[segs[1]]["object"], "deleted": true})
	case len(segs) == 2:
		write(p.Objects[segs[1]])
	case segs[2] == "content":
		io.WriteString(w, "file content")
	default: // a sub-collection: input items, items, vector store files
		write(map[string]any{"object": "list", "data": []any{}, "has_more": false, "first_id": nil, "last_id": nil})
	}
}
