package gatewaytest

import (
	"strings"
)

// GrepLines is the lines of s holding substr.
func GrepLines(s, substr string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
