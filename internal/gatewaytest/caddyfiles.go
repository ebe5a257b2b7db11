package gatewaytest

import (
	"encoding/json"
)

// IsEnvelope reports whether body is {"error":{"message":...,"type":...}}.
func IsEnvelope(body string) bool {
	var e struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	return json.Unmarshal([]byte(body), &e) == nil && e.Error != nil && e.Error.Message != "" && e.Error.Type != ""
}
