// Command plaincaddy is Caddy with its standard modules only, at the
// project's Caddy version (go.mod's): the load harness's floor, so plain
// Caddy's memory and CPU are those of Caddy as released, not of a binary
// that also carries modelgate.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

func main() {
	caddycmd.Main()
}
