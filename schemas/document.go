package schemas

import "encoding/json"

// Document returns a fresh decoded copy of an embedded schema file (e.g.
// "batches.create.request.json", "defs.json"), for tools that generate
// documents from the schemas; false when there is no such file.
func Document(name string) (map[string]any, bool) {
	b, err := files.ReadFile(name)
	if err != nil {
		return nil, false
	}
	var doc map[string]any
	if json.Unmarshal(b, &doc) != nil {
		return nil, false
	}
	return doc, true
}
