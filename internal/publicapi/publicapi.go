// Package publicapi reads the operations of the public API from its
// OpenAPI description (spec/openai-openapi.yaml): the generator of
// module/publicpaths_gen.go and the test that walks the description's
// paths both read it here.
package publicapi

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Operation is one operation of the public API: its method, its path
// below the version prefix (/v1) with {parameters}, and its operationId.
type Operation struct {
	Method, Path, ID string
}

// Operations returns the operations of an OpenAPI description, sorted by
// path then method. A path the description lists again with a query
// (`/responses?beta=true`) is the same path: its first operationId, in the
// description's order, is kept.
func Operations(spec []byte) ([]Operation, error) {
	var doc struct {
		Paths yaml.Node `yaml:"paths"`
	}
	if err := yaml.Unmarshal(spec, &doc); err != nil {
		return nil, fmt.Errorf("reading the OpenAPI description: %w", err)
	}
	if doc.Paths.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the OpenAPI description has no paths")
	}
	seen := map[[2]string]bool{}
	var ops []Operation
	for i := 0; i+1 < len(doc.Paths.Content); i += 2 {
		path, _, _ := strings.Cut(doc.Paths.Content[i].Value, "?")
		item := doc.Paths.Content[i+1]
		for j := 0; j+1 < len(item.Content); j += 2 {
			method := strings.ToUpper(item.Content[j].Value)
			switch method {
			case "GET", "POST", "PUT", "PATCH", "DELETE":
			default:
				continue // parameters, summary and the like
			}
			var op struct {
				ID string `yaml:"operationId"`
			}
			if err := item.Content[j+1].Decode(&op); err != nil {
				return nil, fmt.Errorf("reading %s %s: %w", method, path, err)
			}
			if key := [2]string{method, path}; !seen[key] {
				seen[key] = true
				ops = append(ops, Operation{Method: method, Path: path, ID: op.ID})
			}
		}
	}
	sort.Slice(ops, func(i, j int) bool {
		if ops[i].Path != ops[j].Path {
			return ops[i].Path < ops[j].Path
		}
		return ops[i].Method < ops[j].Method
	})
	return ops, nil
}
