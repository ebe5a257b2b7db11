// Package publicapi lists the operations of the public API from its
// OpenAPI description, as schemas/openapi embeds it (contract.json,
// itself held to spec/openai-openapi.yaml by that package's test): the
// generator of module/publicpaths_gen.go and the tests that walk the
// public API's paths both read them here.
package publicapi

import (
	"sort"
	"strings"

	"github.com/modelgate/modelgate/schemas/openapi"
)

// Operation is one operation of the public API: its method, its path
// below the version prefix (/v1) with {parameters}, and its operationId.
type Operation struct {
	Method, Path, ID string
}

// Operations returns the public API's operations, sorted by path then
// method. A path the description lists again with a query
// (`/responses?beta=true`) is the same path: its first operationId is
// kept.
func Operations() []Operation {
	seen := map[[2]string]bool{}
	var ops []Operation
	for _, o := range openapi.Operations() {
		path, _, _ := strings.Cut(strings.TrimPrefix(o.Path, "/v1"), "?")
		if key := [2]string{o.Method, path}; !seen[key] {
			seen[key] = true
			ops = append(ops, Operation{Method: o.Method, Path: path, ID: o.OperationID})
		}
	}
	sort.SliceStable(ops, func(i, j int) bool {
		if ops[i].Path != ops[j].Path {
			return ops[i].Path < ops[j].Path
		}
		return ops[i].Method < ops[j].Method
	})
	return ops
}
