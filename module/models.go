package modelgate

import (
	"fmt"
	"net/http"
	"slices"
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

// model is a model in the public shape.
type model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// listedModels is the union of the chat routes' models, sorted by ID.
func (g *Gateway) listedModels() []model {
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
	return data
}

// listedModel is the model the gateway lists as name, if it does.
func (g *Gateway) listedModel(name string) (model, bool) {
	data := g.listedModels()
	i := slices.IndexFunc(data, func(m model) bool { return m.ID == name })
	if i < 0 {
		return model{}, false
	}
	return data[i], true
}

// lists tells whether the gateway lists the model name.
func (g *Gateway) lists(name string) bool {
	_, ok := g.listedModel(name)
	return ok
}

// serveModels answers GET /v1/models with the listed models in the
// public list shape, and GET /v1/models/{model} with the one of them it
// names, or 404 model_not_found.
func (g *Gateway) serveModels(w http.ResponseWriter, call *upstreams.Call) error {
	if call.Operation != upstreams.OpModelsRetrieve {
		upstreams.WriteJSON(w, http.StatusOK, map[string]any{"object": "list", "data": g.listedModels()})
		return nil
	}
	name := call.Params["model"]
	m, ok := g.listedModel(name)
	if !ok {
		return &upstreams.Error{Status: http.StatusNotFound, Type: upstreams.TypeInvalidRequest, Param: "model", Code: "model_not_found",
			Message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", name)}
	}
	upstreams.WriteJSON(w, http.StatusOK, m)
	return nil
}
