package tokens

import "encoding/json"

// jsonText is the compact JSON of a decoded value, the form in which tool
// definitions and calls reach a model.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
