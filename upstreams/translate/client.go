package translate

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"
	"go.uber.org/zap"

	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
)

// Client holds the settings every provider block shares and sends its
// requests. Provider modules embed it, so its fields are theirs in JSON.
type Client struct {
	// BaseURL is the provider's API root, e.g. https://api.anthropic.com.
	// Each provider documents its default. Placeholders are expanded.
	//
	// Caddyfile: `base_url <url>`
	BaseURL string `json:"base_url,omitempty"`

	// APIKey is the provider's key, sent the way the provider wants it
	// (each provider documents how). Placeholders such as
	// {env.ANTHROPIC_API_KEY} are expanded; the client's own key is never
	// forwarded. Default: none.
	//
	// Caddyfile: `api_key <key>`
	APIKey string `json:"api_key,omitempty"`

	// ModelNames are the models this provider serves, listed by the
	// gateway's GET /v1/models. Default: none.
	//
	// Caddyfile: `models <name...>`
	ModelNames []string `json:"models,omitempty"`

	// ModelAliases map a client-facing model name to the provider's name
	// for it (for azure: the deployment). Default: none (the request's
	// model is sent as it is).
	//
	// Caddyfile: `alias <client-name> <provider-name>` (repeatable)
	ModelAliases map[string]string `json:"model_aliases,omitempty"`

	// StreamIdleTimeout bounds the wait for the next bytes of a reply body
	// (between two events of a stream); a stream that idles past it ends
	// for the client with an error event, as a cut stream does.
	// Default: 10m.
	//
	// Caddyfile: `stream_idle_timeout <duration>`
	StreamIdleTimeout caddy.Duration `json:"stream_idle_timeout,omitempty"`

	// MaxReplySize bounds the bytes of one reply, a stream's comments
	// included; a reply that passes it ends for the client with an error
	// event (a stream), a 502 `upstream_reply_too_large` (a reply read
	// whole or declaring a larger Content-Length), or cut there (a JSON
	// reply relayed as it arrives). Default: 1GiB.
	//
	// Caddyfile: `max_reply_size <size>`
	MaxReplySize int64 `json:"max_reply_size,omitempty"`

	// MaxReplyBuffer bounds what the gateway holds of a reply at once: one
	// event of a stream it translates, one Bedrock event-stream frame, a
	// reply it translates whole; past it, an error event
	// `upstream_event_too_large` or a 502 `upstream_reply_too_large`.
	// Default: 64MiB.
	//
	// Caddyfile: `max_reply_buffer <size>`
	MaxReplyBuffer int64 `json:"max_reply_buffer,omitempty"`

	// MaxReplyDuration bounds one reply's time from its headers to its
	// end; a reply still going then ends with an error event (a stream) or
	// a 504 `upstream_reply_timeout`. Default: 1h.
	//
	// Caddyfile: `max_reply_duration <duration>`
	MaxReplyDuration caddy.Duration `json:"max_reply_duration,omitempty"`

	// TransportRaw configures the HTTP transport, a module of Caddy's
	// http.reverse_proxy.transport namespace. Default: Caddy's `http`
	// transport (TLS for https base URLs) with dial_timeout 10s,
	// response_header_timeout 10m (the official SDKs' own timeout) and at
	// most 1 MiB of response headers. A call that timed out after it was
	// sent is not sent again unless its method is idempotent or its route
	// says retry_non_idempotent.
	//
	// Caddyfile: `dial_timeout <duration>` and `response_header_timeout
	// <duration>` set those fields of the default transport.
	TransportRaw json.RawMessage `json:"transport,omitempty" caddy:"namespace=http.reverse_proxy.transport inline_key=protocol"`

	// Base is the parsed base URL and Key the expanded key, set at
	// provision.
	Base *url.URL `json:"-"`
	Key  string   `json:"-"`

	kind      string
	transport http.RoundTripper
	logger    *zap.Logger
}

// ProvisionClient expands placeholders (defaultBase when base_url is
// unset) and loads the transport; kind names the provider in errors.
func (c *Client) ProvisionClient(ctx caddy.Context, kind, defaultBase string) error {
	c.kind, c.logger = kind, ctx.Logger()
	repl := caddy.NewReplacer()
	raw := c.BaseURL
	if raw == "" {
		raw = defaultBase
	}
	raw = strings.TrimRight(repl.ReplaceAll(raw, ""), "/")
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s upstream: base_url %q must be an absolute http(s) URL", kind, raw)
	}
	c.Base = u
	c.Key = repl.ReplaceAll(c.APIKey, "")
	if c.StreamIdleTimeout == 0 {
		c.StreamIdleTimeout = caddy.Duration(defaultStreamIdleTimeout)
	}
	if c.MaxReplySize <= 0 {
		c.MaxReplySize = defaultMaxReplySize
	}
	if c.MaxReplyBuffer <= 0 {
		c.MaxReplyBuffer = defaultMaxReplyBuffer
	}
	if c.MaxReplyDuration <= 0 {
		c.MaxReplyDuration = caddy.Duration(defaultMaxReplyDuration)
	}
	if c.TransportRaw == nil {
		transport := transportDefaults(map[string]any{})
		if u.Scheme == "https" {
			transport["tls"] = map[string]any{}
		}
		c.TransportRaw, _ = json.Marshal(transport)
	}
	mod, err := ctx.LoadModule(c, "TransportRaw")
	if err != nil {
		return fmt.Errorf("%s upstream: loading transport: %w", kind, err)
	}
	rt, ok := mod.(http.RoundTripper)
	if !ok {
		return fmt.Errorf("%s upstream: transport %T is not an http.RoundTripper", kind, mod)
	}
	c.transport = rt
	return nil
}

// ProviderModel is the name the provider knows the call's model by.
func (c *Client) ProviderModel(model string) string {
	if alias, ok := c.ModelAliases[model]; ok {
		return alias
	}
	return model
}

// Models names the configured models and the client-facing aliases.
func (c *Client) Models() []string {
	names := append([]string(nil), c.ModelNames...)
	for alias := range c.ModelAliases {
		names = append(names, alias)
	}
	return names
}

// URL is the base URL with escapedPath appended and the given query.
// escapedPath is in its sent form (a model name in it through
// url.PathEscape), so it is encoded once: a name with "/" or non-ASCII
// letters is sent as %2F and %C3%BC, never %252F.
func (c *Client) URL(escapedPath string, query url.Values) string {
	u := *c.Base
	u.RawPath = c.Base.EscapedPath() + escapedPath
	u.Path, _ = url.PathUnescape(u.RawPath) // the escaped form is ours: its errors cannot occur
	u.RawQuery = query.Encode()
	return u.String()
}

// Send sends req; a provider that cannot be reached is a 502
// *upstreams.Error, and the call's context ending is returned as is.
func (c *Client) Send(call *upstreams.Call, req *http.Request) (*http.Response, error) {
	// Identity encoding keeps streams unbuffered and replies checkable;
	// the site's own `encode` may still compress toward the client.
	req.Header["Accept-Encoding"] = identityEncoding
	resp, err := c.transport.RoundTrip(req)
	if err != nil {
		if ctxErr := call.Request.Context().Err(); ctxErr != nil {
			return nil, ctxErr
		}
		c.logger.Warn("provider unreachable", zap.String("provider", c.kind), zap.String("host", c.Base.Host), zap.Error(err))
		return nil, sendError(err)
	}
	if resp.ContentLength > c.MaxReplySize {
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %w", upstreams.ErrRequestSent, errReplyTooLarge())
	}
	resp.Body = c.bound(resp.Body)
	return resp, nil
}

// identityEncoding is the Accept-Encoding of every provider request, one
// value the requests share (read only) rather than one each.
var identityEncoding = []string{"identity"}

// UnmarshalCaddyfile reads a provider block: the shared options here,
// anything else through option (which reports whether it knew the name).
func (c *Client) UnmarshalCaddyfile(d *caddyfile.Dispenser, kind string, option func(name string) (bool, error)) error {
	d.Next() // the upstream's name or type
	if d.NextArg() {
		return d.ArgErr()
	}
	transport := map[string]any{}
	for d.NextBlock(0) {
		name := d.Val()
		switch name {
		case "base_url":
			if !d.AllArgs(&c.BaseURL) {
				return d.ArgErr()
			}
		case "api_key":
			if !d.AllArgs(&c.APIKey) {
				return d.ArgErr()
			}
		case "models":
			c.ModelNames = d.RemainingArgs()
			if len(c.ModelNames) == 0 {
				return d.ArgErr()
			}
		case "alias":
			var client, provider string
			if !d.AllArgs(&client, &provider) {
				return d.ArgErr()
			}
			if c.ModelAliases == nil {
				c.ModelAliases = map[string]string{}
			}
			c.ModelAliases[client] = provider
		case "max_reply_size", "max_reply_buffer":
			var value string
			if !d.AllArgs(&value) {
				return d.ArgErr()
			}
			size, err := humanize.ParseBytes(value)
			if err != nil || size == 0 || size > 1<<40 {
				return d.Errf("bad %s %q: want a size such as 64MiB", name, value)
			}
			if name == "max_reply_size" {
				c.MaxReplySize = int64(size)
			} else {
				c.MaxReplyBuffer = int64(size)
			}
		case "dial_timeout", "response_header_timeout", "stream_idle_timeout", "max_reply_duration":
			var value string
			if !d.AllArgs(&value) {
				return d.ArgErr()
			}
			dur, err := caddy.ParseDuration(value)
			if err != nil || dur <= 0 {
				return d.Errf("bad %s %q: want a positive duration", name, value)
			}
			switch name {
			case "stream_idle_timeout":
				c.StreamIdleTimeout = caddy.Duration(dur)
			case "max_reply_duration":
				c.MaxReplyDuration = caddy.Duration(dur)
			default:
				transport[name] = caddy.Duration(dur)
			}
		default:
			known, err := option(name)
			if err != nil {
				return err
			}
			if !known {
				return d.Errf("unrecognized %s upstream option %q", kind, name)
			}
		}
	}
	if len(transport) > 0 {
		c.TransportRaw = caddyconfig.JSON(transportDefaults(transport), nil)
	}
	return nil
}

// DataURL splits a data: URL into its media type and base64 data.
func DataURL(s string) (mediaType, data string, ok bool) {
	rest, found := strings.CutPrefix(s, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	mediaType, isBase64 := strings.CutSuffix(meta, ";base64")
	if !found || !isBase64 || mediaType == "" {
		return "", "", false
	}
	return mediaType, data, true
}

// DecodeChat reads a call's chat request and refuses what every
// translating provider refuses.
func DecodeChat(kind string, call *upstreams.Call, maxN int) (*ChatRequest, error) {
	var req ChatRequest
	if err := json.Unmarshal(call.Body, &req); err != nil {
		return nil, upstreams.InvalidRequest("", "The request body could not be read: %s.", schemas.DescribeJSONError(err))
	}
	if n := req.Choices(); n > maxN {
		if maxN == 1 {
			return nil, Unsupported(kind, "n", "n must be 1: the provider returns one choice per request.")
		}
		return nil, Unsupported(kind, "n", "n must be at most %d for this provider.", maxN)
	}
	return &req, nil
}

// Serve forwards the call through f and relays the translated reply; the
// gateway prefers Forward, which lets it retry and fall back.
func (c *Client) Serve(w http.ResponseWriter, f upstreams.Forwarder, call *upstreams.Call) error {
	resp, err := f.Forward(call)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := upstreams.Relay(w, resp, maxServedEvent, call.Operation); err != nil && call.Request.Context().Err() == nil {
		c.logger.Warn("relaying provider response failed", zap.String("provider", c.kind), zap.Error(err))
	}
	return nil
}

// PositiveArg reads an option's one argument as a positive integer.
func PositiveArg(d *caddyfile.Dispenser) (int, error) {
	name := d.Val()
	var v string
	if !d.AllArgs(&v) {
		return 0, d.ArgErr()
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, d.Errf("bad %s %q: want a positive integer", name, v)
	}
	return n, nil
}

// Logger is the provider's logger, set at provision.
func (c *Client) Logger() *zap.Logger { return c.logger }

// WrapTransport wraps the provisioned transport (e.g. to trace calls).
func (c *Client) WrapTransport(wrap func(http.RoundTripper) http.RoundTripper) {
	c.transport = wrap(c.transport)
}
