package conformance

import (
	"net/http"
)

// Models (public API, `GET /models` and `GET /models/{model}`): read
// only, so their round trip is list -> retrieve.

const specModels = "List models: a list of `model` objects (id, object \"model\", created in seconds, owned_by); Retrieve model: the same object for one id, 404 for an unknown one."

// maxModelsRetrieved bounds the retrieves of one run (a provider may
// list hundreds of models).
const maxModelsRetrieved = 3

var modelChecks = []Check{
	{ID: "invariant.round-trip.models", Area: AreaChat, Spec: specModels + " " + specRoundTripFamily,
		run: func(t *T) {
			ex := t.get("models.list", "/v1/models", false)
			t.requireStatus(ex, http.StatusOK)
			items, _ := t.object(ex)["data"].([]any)
			if !t.expect(len(items) > 0, ex, "at least one model", "none") {
				return
			}
			for _, it := range items[:min(len(items), maxModelsRetrieved)] {
				listed, _ := it.(map[string]any)
				id, _ := listed["id"].(string)
				one := t.get("models.retrieve", "/v1/models/"+id, false)
				if t.expectStatus(one, http.StatusOK) {
					got := t.object(one)
					t.expect(sameJSON(got, listed), one, "the listed model: "+jsonText(listed), "%s", jsonText(got))
				}
			}
			t.expectGone(t.get("models.retrieve", "/v1/models/conformance-no-such-model", false), "an unknown model")
			t.expectRefused(t.do(request{op: "models.list", method: http.MethodGet, path: "/v1/models", noAuth: true}))
		}},
}
