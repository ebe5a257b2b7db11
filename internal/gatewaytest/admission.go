package gatewaytest

import (
	"fmt"

	"github.com/modelgate/modelgate/internal/testgateway"
)

// LimitedGateway is a Caddyfile serving chat completions from the reference
// engine on port with keyBlock (keys and their limits).
func LimitedGateway(port int, keyBlock string) string {
	return fmt.Sprintf(`%shttp://127.0.0.1:%d {
	modelgate {
		%s
		route chat.completions.create to reference
	}
}
`, testgateway.GlobalOptions, port, keyBlock)
}
