package modelgate

import (
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/modelgate/modelgate/upstreams"
)

// modelSource is where GET /v1/models finds names: the literal model
// patterns of a chat route and what its upstreams list.
type modelSource struct {
	owner  string
	names  []string
	lister upstreams.ModelLister
}

// modelListers collects the model sources of the chat routes.
func modelListers(chat *operationRoutes) []modelSource {
	var out []modelSource
	for _, r := range chat.routes {
		var literal []string
		for _, pattern := range r.models {
			if !strings.ContainsAny(pattern, `*?[\`) {
				literal = append(literal, pattern)
			}
		}
		for _, t := range append(append([]target(nil), r.primaries...), r.fallbacks...) {
			src := modelSource{owner: t.name, names: literal}
			if l, ok := t.upstream.(upstreams.ModelLister); ok {
				src.lister = l
			}
			out = append(out, src)
		}
	}
	return out
}

// startedAt stands in for the models' creation time, which the gateway
// cannot know; it is stable for the process's life.
var startedAt = time.Now().Unix()

// serveModels answers GET /v1/models with the union of the chat routes'
// models, in the public list shape.
func (g *Gateway) serveModels(w http.ResponseWriter) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	seen := map[string]bool{}
	data := []model{}
	add := func(name, owner string) {
		if name != "" && !seen[name] {
			seen[name] = true
			data = append(data, model{ID: name, Object: "model", Created: startedAt, OwnedBy: owner})
		}
	}
	for _, src := range g.modelUpstreams {
		for _, name := range src.names {
			add(name, src.owner)
		}
		if src.lister != nil {
			for _, name := range src.lister.Models() {
				add(name, src.owner)
			}
		}
	}
	sort.Slice(data, func(i, j int) bool { return data[i].ID < data[j].ID })
	upstreams.WriteJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}
