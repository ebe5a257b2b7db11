package conformance

import (
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/schemas/openapi"
)

// FieldCoverage is one operation's row of the operation x response field
// matrix: how many of the members its replies may hold (by the public
// API's schema) a checked reply showed, and which it never showed, so a
// field no reply held to the contract is visible in the report.
type FieldCoverage struct {
	Operation string `json:"operation"` // the OpenAPI operationId
	Method    string `json:"method"`
	Path      string `json:"path"`
	Replies   int    `json:"replies"` // success replies checked
	Total     int    `json:"total"`
	Covered   int    `json:"covered"`
	// Unchecked are the fields no checked reply held.
	Unchecked []string `json:"unchecked,omitempty"`
}

// recordFields notes the fields a reply held to the operation's schema
// showed.
func (c *coverage) recordFields(o *openapi.Operation, doc any) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fields == nil {
		c.fields = map[*openapi.Operation]*fieldsSeen{}
	}
	fs := c.fields[o]
	if fs == nil {
		fs = &fieldsSeen{paths: map[string]bool{}}
		c.fields[o] = fs
	}
	fs.replies++
	for _, p := range openapi.Present(doc) {
		fs.paths[p] = true
	}
}

type fieldsSeen struct {
	replies int
	paths   map[string]bool
}

// fieldRows builds the matrix: every operation of the suite's surface
// whose replies the contract describes, and any other one the run called.
// Called with c.mu held.
func (c *coverage) fieldRows() []FieldCoverage {
	var rows []FieldCoverage
	ops := openapi.Operations()
	for i := range ops {
		o := &ops[i]
		seen := c.fields[o]
		if o.JSON == nil || (seen == nil && !inSurface(o)) {
			continue
		}
		row := FieldCoverage{Operation: o.OperationID, Method: o.Method, Path: o.Path}
		for _, f := range o.Fields() {
			row.Total++
			if seen != nil && seen.paths[f.Path] {
				row.Covered++
			} else {
				row.Unchecked = append(row.Unchecked, f.Path)
			}
		}
		if seen != nil {
			row.Replies = seen.replies
		}
		if row.Total > 0 {
			rows = append(rows, row)
		}
	}
	return rows
}

// inSurface reports whether the suite's operation table has the
// operation: the same method and path template, parameters unnamed.
func inSurface(o *openapi.Operation) bool {
	parts := strings.Split(o.Path, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, "{") {
			parts[i] = "{}"
		}
	}
	template := strings.Join(parts, "/")
	for _, op := range operations {
		if op.method == o.Method && op.path == template {
			return true
		}
	}
	return false
}

// writeFieldText writes the field matrix: covered of total per operation,
// and the fields never shown.
func writeFieldText(b *strings.Builder, rows []FieldCoverage) {
	b.WriteString("\n== response fields held to the public API's schema: covered/total per operation (replies checked)\n")
	for _, r := range rows {
		fmt.Fprintf(b, "  %-34s %-6s %-52s %3d/%-3d (%d replies)\n", r.Operation, r.Method, r.Path, r.Covered, r.Total, r.Replies)
		if r.Replies == 0 {
			b.WriteString("      never called with success\n")
			continue
		}
		if len(r.Unchecked) > 0 {
			fmt.Fprintf(b, "      unchecked: %s\n", strings.Join(r.Unchecked, ", "))
		}
	}
}
