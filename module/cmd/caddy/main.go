// Command caddy is Caddy with its standard modules and modelgate, so the
// gateway runs from the repository without xcaddy:
//
//	go run ./module/cmd/caddy run --config caddyfiles/quickstart.Caddyfile
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/modelgate/modelgate/module"
)

func main() {
	caddycmd.Main()
}
