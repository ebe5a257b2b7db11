package conformance

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/modelgate/modelgate/schemas"
)

// Generated cases: for each operation with a request schema, valid
// requests (optional fields, boundary values, unicode, enum values) that
// must be accepted, and requests with one constraint broken that must be
// refused with 400 and `param` naming the field; the same for list
// queries. Cases come from Config.Seed, at most Config.MaxCases per
// check; a failing request is shrunk to the fewest fields that still fail.

// genTarget is an operation the generated cases are sent to.
type genTarget struct {
	op, area string
	// query: the schema is of query parameters, not of a body.
	query bool
	beta  bool
	// setup makes what the requests need (a store, a file) and returns
	// the path and the smallest valid body (or query) to build on.
	setup func(t *T) (path string, base map[string]any)
	// fresh, when set, gives each accepted case a body field of its own
	// (a new file to attach) and says how to undo an accepted case.
	fresh func(t *T, body map[string]any)
	// skip names properties no valid case sets: IDs that must name
	// existing objects, and fields whose acceptance depends on the model or
	// the account (the spec says so), which a conforming target may
	// refuse. Invalid cases break them too: a broken rule is refused
	// whatever the model.
	skip []string
	// caps bounds costly integers.
	caps map[string]float64
}

// chatSkip: the spec itself lets a model refuse max_tokens (o-series),
// stop (some reasoning models), reasoning_effort values and modalities;
// tool fields need their companions; stream replies are held elsewhere.
var chatSkip = []string{"messages", "model", "stream", "stream_options", "tools", "tool_choice", "parallel_tool_calls", "top_logprobs", "response_format",
	"reasoning_effort", "service_tier", "modalities", "audio", "prediction", "web_search_options", "function_call", "functions", "logit_bias",
	"verbosity", "prompt_cache_retention", "prompt_cache_options", "moderation", "max_tokens", "stop"}

var genTargets = []genTarget{
	{op: "chat.completions.create", area: AreaChat, skip: chatSkip, caps: map[string]float64{"n": 3, "max_completion_tokens": 32},
		setup: func(t *T) (string, map[string]any) {
			return "/v1/chat/completions", t.chatBody("Say hello.")
		}},
	{op: "threads.create", area: AreaThreads, beta: true, skip: []string{"tool_resources", "attachments"},
		setup: func(t *T) (string, map[string]any) { return "/v1/threads", map[string]any{} },
		fresh: func(t *T, body map[string]any) {}},
	{op: "threads.update", area: AreaThreads, beta: true, skip: []string{"tool_resources"},
		setup: func(t *T) (string, map[string]any) {
			return "/v1/threads/" + t.newThread(map[string]any{}), map[string]any{}
		}},
	{op: "vector_stores.create", area: AreaVectorStores, beta: true, skip: []string{"file_ids"},
		setup: func(t *T) (string, map[string]any) { return "/v1/vector_stores", map[string]any{} },
		fresh: func(t *T, body map[string]any) {}},
	{op: "vector_stores.update", area: AreaVectorStores, beta: true,
		setup: func(t *T) (string, map[string]any) {
			return "/v1/vector_stores/" + t.newVectorStore(), map[string]any{}
		}},
	{op: "vector_stores.search", area: AreaVectorStores, beta: true,
		setup: func(t *T) (string, map[string]any) {
			return "/v1/vector_stores/" + t.newVectorStore() + "/search", map[string]any{"query": "rivers"}
		}},
	{op: "vector_stores.files.create", area: AreaVectorStores, beta: true, skip: []string{"file_id"},
		setup: func(t *T) (string, map[string]any) {
			return "/v1/vector_stores/" + t.newVectorStore() + "/files", map[string]any{"file_id": "file-conformance-generated"}
		},
		fresh: func(t *T, body map[string]any) {
			body["file_id"] = t.upload("generated.txt", "assistants", []byte("A generated attachment."))
		}},
	{op: "batches.create", area: AreaBatches, skip: []string{"input_file_id"},
		setup: func(t *T) (string, map[string]any) {
			return "/v1/batches", map[string]any{"input_file_id": t.batchInput(1), "endpoint": "/v1/chat/completions", "completion_window": "24h"}
		},
		fresh: func(t *T, body map[string]any) {}},
	{op: "conversations.create", area: AreaConversations, skip: []string{"items"},
		setup: func(t *T) (string, map[string]any) { return conversationsPath, map[string]any{} },
		fresh: func(t *T, body map[string]any) {}},
	{op: "conversations.update", area: AreaConversations,
		setup: func(t *T) (string, map[string]any) {
			_, c := t.conversation(map[string]any{})
			return conversationsPath + "/" + c.ID, map[string]any{"metadata": map[string]any{}}
		}},
	{op: "conversations.items.list", area: AreaConversations, query: true, skip: []string{"after"},
		setup: func(t *T) (string, map[string]any) {
			_, c := t.conversation(map[string]any{"items": userItems("one")})
			return conversationsPath + "/" + c.ID + "/items", map[string]any{}
		}},
	{op: "files.list", area: AreaFiles, query: true, skip: []string{"after", "purpose"},
		setup: func(t *T) (string, map[string]any) { return "/v1/files", map[string]any{} }},
	{op: "batches.list", area: AreaBatches, query: true, skip: []string{"after"},
		setup: func(t *T) (string, map[string]any) { return "/v1/batches", map[string]any{} }},
	{op: "vector_stores.list", area: AreaVectorStores, query: true, beta: true, skip: []string{"after", "before"},
		setup: func(t *T) (string, map[string]any) { return "/v1/vector_stores", map[string]any{} }},
	{op: "vector_stores.files.list", area: AreaVectorStores, query: true, beta: true, skip: []string{"after", "before"},
		setup: func(t *T) (string, map[string]any) {
			return "/v1/vector_stores/" + t.newVectorStore() + "/files", map[string]any{}
		}},
}

const specGenerated = "Every request field's rules (required, type, range, length, items, enum) as the request schemas state them from the spec and the public API: a request keeping them is accepted, one breaking one of them is refused with 400, type invalid_request_error and `param` naming the field."

var generatedChecks = func() []Check {
	var checks []Check
	for _, gt := range genTargets {
		checks = append(checks,
			Check{ID: "generated." + gt.op + ".valid", Area: gt.area, Spec: specGenerated, run: func(t *T) { t.generatedValid(gt) }},
			Check{ID: "generated." + gt.op + ".invalid", Area: gt.area, Spec: specGenerated, run: func(t *T) { t.generatedInvalid(gt) }})
	}
	return checks
}()

// schemaFile names the schema a target's cases come from.
func (gt genTarget) schemaFile() string {
	if gt.query {
		return gt.op + ".query.json"
	}
	return gt.op + ".request.json"
}

// generator seeds a check's cases from the run's seed and its own name,
// so each check's cases are the same whatever else runs.
func (t *T) generator(gt genTarget, kind string) (*gen, node) {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%s", t.cfg.Seed, gt.op, kind)
	g := newGen(h.Sum64(), gt.skip, gt.caps)
	doc, ok := schemas.Document(gt.schemaFile())
	if !ok {
		t.skip("no schema %s", gt.schemaFile())
	}
	return g, node{m: doc, root: doc}
}

// genCase is one generated request and what it must get.
type genCase struct {
	body  map[string]any
	what  string
	field string // for an invalid case, the field param must name
}

func (t *T) generatedValid(gt genTarget) {
	path, base := gt.setup(t)
	g, root := t.generator(gt, "valid")
	props, _ := root.sub("properties")
	var cases []genCase
	// One case per optional property (each enum value of it in turn),
	// then cases with several at once; every one checked locally.
	for attempt := 0; len(cases) < t.cfg.MaxCases && attempt < t.cfg.MaxCases*8; attempt++ {
		body := deepCopy(base).(map[string]any)
		names := slices.DeleteFunc(root.props(), func(k string) bool { return g.skip[k] })
		if len(names) == 0 {
			t.skip("%s has no field a client may set freely", gt.op)
		}
		var set []string
		pick := names
		if attempt < len(names)*3 {
			pick = []string{names[attempt%len(names)]}
		}
		for _, k := range pick {
			if len(pick) > 1 && g.rnd.IntN(2) == 0 {
				continue
			}
			pn, _ := props.sub(k)
			if v, ok := g.value(pn, k, 0); ok {
				body[k] = v
				set = append(set, k)
			}
		}
		if len(set) == 0 || !t.locallyValid(gt, body) {
			continue
		}
		cases = append(cases, genCase{body: body, what: "valid with " + strings.Join(set, ", ")})
	}
	t.res.Cases = len(cases)
	for i, c := range cases {
		if gt.fresh != nil {
			gt.fresh(t, c.body)
		}
		ex := t.sendGenerated(gt, path, c.body)
		if ex.status >= 200 && ex.status < 300 {
			continue
		}
		small := t.shrink(gt, path, base, c, func(ex *exchange) bool { return ex.status < 200 || ex.status > 299 })
		t.fail(small.reproducible(fmt.Sprintf("accepted (2xx): case %d of seed %d, %s", i+1, t.cfg.Seed, c.what), small.seenStatus()))
	}
}

func (t *T) generatedInvalid(gt genTarget) {
	path, base := gt.setup(t)
	g, root := t.generator(gt, "invalid")
	var all []genCase
	for _, b := range g.breaches(root, nil, 0) {
		body := deepCopy(base).(map[string]any)
		if len(b.path) > 1 {
			props, _ := root.sub("properties")
			pn, _ := props.sub(b.path[0])
			v, ok := g.value(pn, b.path[0], 0)
			if _, isObject := v.(map[string]any); !ok || !isObject {
				continue
			}
			body[b.path[0]] = v
		}
		body = b.apply(body)
		if t.locallyValid(gt, body) {
			continue // a rule the schema does not hold (or holds elsewhere)
		}
		// Half the cases carry valid optional fields too, which a failure
		// is shrunk of.
		if g.rnd.IntN(2) == 0 {
			props, _ := root.sub("properties")
			for _, k := range root.props() {
				if _, set := body[k]; set || g.skip[k] || k == b.path[0] || g.rnd.IntN(3) > 0 {
					continue
				}
				pn, _ := props.sub(k)
				if v, ok := g.value(pn, k, 0); ok {
					padded := deepCopy(body).(map[string]any)
					padded[k] = v
					if _, v := schemas.ValidateRequest(gt.op, []byte(jsonText(padded))); gt.query || (v != nil && namesField(v.Param, b.path[0])) {
						body = padded
					}
				}
			}
		}
		all = append(all, genCase{body: body, what: b.what, field: b.path[0]})
	}
	g.rnd.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	all = fieldsFirst(all)
	if len(all) > t.cfg.MaxCases {
		all = all[:t.cfg.MaxCases]
	}
	t.res.Cases = len(all)
	for i, c := range all {
		broken := func(ex *exchange) bool { return !refusedNaming(ex, c.field) }
		ex := t.sendGenerated(gt, path, c.body)
		if !broken(ex) {
			continue
		}
		small := t.shrink(gt, path, base, c, broken)
		t.fail(small.reproducible(fmt.Sprintf("400 invalid_request_error with param naming %s: case %d of seed %d, %s", c.field, i+1, t.cfg.Seed, c.what), small.seenStatus()+", param "+jsonText(small.errorOf().Param)))
	}
}

// reproducible is evidence with the whole request, to send it again.
func (ex *exchange) reproducible(expected, seen string) Evidence {
	ev := ex.evidence(expected, seen)
	ev.Request = ex.requestLine(func(b []byte) string { return string(b) })
	return ev
}

// refusedNaming reports whether a reply is the 400 naming field.
func refusedNaming(ex *exchange, field string) bool {
	e := ex.errorOf()
	return ex.status == http.StatusBadRequest && e.Type == "invalid_request_error" && e.Param != nil && namesField(*e.Param, field)
}

// locallyValid reports whether the schemas accept a generated request.
func (t *T) locallyValid(gt genTarget, body map[string]any) bool {
	if gt.query {
		return queryable(body) && schemas.ValidateQuery(gt.op, queryOf(body)) == nil
	}
	b, _ := json.Marshal(body)
	_, v := schemas.ValidateRequest(gt.op, b)
	return v == nil
}

// queryable reports whether every value of a query document is a scalar.
func queryable(body map[string]any) bool {
	for _, v := range body {
		switch v.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// sendGenerated sends a case as a body or as a query.
func (t *T) sendGenerated(gt genTarget, path string, body map[string]any) *exchange {
	if gt.query {
		return t.do(request{op: gt.op, method: http.MethodGet, path: path, query: queryOf(body), beta: gt.beta})
	}
	ex := t.do(request{op: gt.op, method: http.MethodPost, path: path, json: body, beta: gt.beta})
	if ex.status == http.StatusOK {
		t.undoAccepted(gt, path, ex)
	}
	return ex
}

// queryOf writes a generated query document as query parameters.
func queryOf(body map[string]any) url.Values {
	q := url.Values{}
	for k, v := range body {
		q.Set(k, queryText(v))
	}
	return q
}

// queryText writes a query value as a client would.
func queryText(v any) string {
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return fmt.Sprint(int64(f))
	}
	return fmt.Sprint(v)
}

// undoAccepted registers the clean-up of what an accepted create made.
func (t *T) undoAccepted(gt genTarget, path string, ex *exchange) {
	if gt.query || ex.status != http.StatusOK || gt.fresh == nil {
		return
	}
	var o struct {
		ID string `json:"id"`
	}
	json.Unmarshal(ex.body, &o)
	if o.ID == "" {
		return
	}
	switch gt.op {
	case "batches.create":
		t.cleanup(request{method: http.MethodPost, path: "/v1/batches/" + o.ID + "/cancel"})
	default:
		t.cleanup(request{method: http.MethodDelete, path: path + "/" + o.ID, beta: gt.beta})
	}
}

// shrink removes, one at a time, the fields of a failing case that are
// not in the base request nor the one broken, keeping each removal after
// which the case still fails; it returns the last failing exchange.
func (t *T) shrink(gt genTarget, path string, base map[string]any, c genCase, fails func(*exchange) bool) *exchange {
	body := deepCopy(c.body).(map[string]any)
	last := t.sendGenerated(gt, path, body)
	keys := make([]string, 0, len(body))
	for k := range body {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, inBase := base[k]; inBase || k == c.field {
			continue
		}
		smaller := deepCopy(body).(map[string]any)
		delete(smaller, k)
		if c.field == "" && !t.locallyValid(gt, smaller) {
			continue
		}
		if ex := t.sendGenerated(gt, path, smaller); fails(ex) {
			body, last = smaller, ex
		}
	}
	return last
}

// fieldsFirst orders shuffled cases round-robin by the field they break:
// one case of every field before a second of any, so a MaxCases cut keeps
// every field's rules in play however many rules a schema adds to another
// field.
func fieldsFirst(all []genCase) []genCase {
	var fields []string
	byField := map[string][]genCase{}
	for _, c := range all {
		if _, seen := byField[c.field]; !seen {
			fields = append(fields, c.field)
		}
		byField[c.field] = append(byField[c.field], c)
	}
	out := make([]genCase, 0, len(all))
	for round := 0; len(out) < len(all); round++ {
		for _, f := range fields {
			if cs := byField[f]; round < len(cs) {
				out = append(out, cs[round])
			}
		}
	}
	return out
}
