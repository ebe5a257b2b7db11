package modelgate

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/modelgate/modelgate/module/ratelimit"
)

func TestUnmarshalCaddyfile(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		want    Gateway
		upJSON  map[string]string
		wantErr string
	}{
		{
			name:  "empty block",
			input: `modelgate`,
			want:  Gateway{},
		},
		{
			name: "keys with options",
			input: `modelgate {
				key {env.DEV_KEY} {
					name dev
					owner team-a
					operations chat.* files.*
				}
				key_sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
				keys_file /etc/modelgate/keys.json
			}`,
			want: Gateway{
				Keys: []KeyConfig{
					{Key: "{env.DEV_KEY}", Name: "dev", Owner: "team-a", Operations: []string{"chat.*", "files.*"}},
					{SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
				},
				KeysFile: "/etc/modelgate/keys.json",
			},
		},
		{
			name: "beta headers, body size, routes",
			input: `modelgate {
				beta_headers X-Beta OpenAI-Beta
				max_body_size 2MiB
				route chat.completions.create models.list to openai
				route files.* to local
				upstream openai {
					base_url http://x/v1
				}
			}`,
			want: Gateway{
				BetaHeaders: []string{"X-Beta", "OpenAI-Beta"},
				MaxBodySize: 2 << 20,
				Routes: []Route{
					{Operations: []string{"chat.completions.create", "models.list"}, Upstreams: []string{"openai"}},
					{Operations: []string{"files.*"}, Upstreams: []string{"local"}},
				},
			},
		},
		{
			name: "model routes with weights, fallbacks and retries",
			input: `modelgate {
				route chat.completions.create model gpt-* o* to openai azure fallback groq {
					weights 3 1
					retries 2
					max_retry_wait 10s
				}
				route chat.completions.create model llama* to vllm
				upstream openai {
					base_url http://x/v1
				}
				upstream azure {
					base_url http://x/v1
				}
				upstream groq {
					base_url http://x/v1
				}
				upstream vllm {
					base_url http://x/v1
				}
			}`,
			want: Gateway{
				Routes: []Route{
					{
						Operations: []string{"chat.completions.create"}, Models: []string{"gpt-*", "o*"},
						Upstreams: []string{"openai", "azure"}, Fallbacks: []string{"groq"},
						Weights: []int{3, 1}, Retries: intPtr(2), MaxRetryWait: caddy.Duration(10 * time.Second),
					},
					{Operations: []string{"chat.completions.create"}, Models: []string{"llama*"}, Upstreams: []string{"vllm"}},
				},
			},
		},
		{
			name: "openai upstream without a type",
			input: `modelgate {
				upstream openai {
					base_url https://api.example.com/v1
					api_key {env.OPENAI_API_KEY}
					header OpenAI-Organization org-1
				}
			}`,
			upJSON: map[string]string{"openai": `{"api_key":"{env.OPENAI_API_KEY}","base_url":"https://api.example.com/v1","headers":{"OpenAI-Organization":"org-1"},"type":"openai"}`},
		},
		{
			name: "typed upstream",
			input: `modelgate {
				upstream azure openai {
					base_url https://example.openai.azure.com/openai/v1
					beta_header OpenAI-Beta
				}
			}`,
			upJSON: map[string]string{"azure": `{"base_url":"https://example.openai.azure.com/openai/v1","beta_header":"OpenAI-Beta","type":"openai"}`},
		},
		{
			name: "redis rate limit store",
			input: `modelgate {
				rate_limit_store redis {env.REDIS_ADDR} {
					password {env.REDIS_PASSWORD}
					db 2
					prefix gw1:
					timeout 250ms
					lease_ttl 1m
					failure_mode closed
				}
			}`,
			want: Gateway{RateLimitStore: &ratelimit.StoreConfig{
				Type: "redis", Address: "{env.REDIS_ADDR}", Password: "{env.REDIS_PASSWORD}", DB: 2, Prefix: "gw1:",
				Timeout: caddy.Duration(250 * time.Millisecond), LeaseTTL: caddy.Duration(time.Minute), FailureMode: "closed",
			}},
		},
		{name: "process rate limit store", input: "modelgate {\n rate_limit_store process\n}", want: Gateway{RateLimitStore: &ratelimit.StoreConfig{Type: "process"}}},
		{name: "rate limit store without type", input: "modelgate {\n rate_limit_store\n}", wantErr: "wrong argument count"},
		{name: "unknown rate limit store", input: "modelgate {\n rate_limit_store etcd x\n}", wantErr: `unknown rate_limit_store "etcd"`},
		{name: "redis store without address", input: "modelgate {\n rate_limit_store redis\n}", wantErr: "want rate_limit_store redis <host:port>"},
		{name: "bad failure mode", input: "modelgate {\n rate_limit_store redis r:6379 {\n failure_mode maybe\n }\n}", wantErr: "bad failure_mode"},
		{name: "bad redis db", input: "modelgate {\n rate_limit_store redis r:6379 {\n db -1\n }\n}", wantErr: "bad db"},
		{name: "unknown redis option", input: "modelgate {\n rate_limit_store redis r:6379 {\n tls\n }\n}", wantErr: "wrong argument count"},
		{name: "rate limit store twice", input: "modelgate {\n rate_limit_store process\n rate_limit_store process\n}", wantErr: "given twice"},
		{name: "argument on directive", input: `modelgate extra`, wantErr: "wrong argument count"},
		{name: "unknown option", input: "modelgate {\n frobnicate\n}", wantErr: `unrecognized modelgate option "frobnicate"`},
		{name: "key without value", input: "modelgate {\n key\n}", wantErr: "wrong argument count"},
		{name: "unknown key option", input: "modelgate {\n key k {\n color red\n }\n}", wantErr: `unrecognized key option "color"`},
		{name: "operations without patterns", input: "modelgate {\n key k {\n operations\n }\n}", wantErr: "wrong argument count"},
		{name: "bad body size", input: "modelgate {\n max_body_size lots\n}", wantErr: "bad max_body_size"},
		{name: "beta_headers empty", input: "modelgate {\n beta_headers\n}", wantErr: "wrong argument count"},
		{name: "route without to", input: "modelgate {\n route files.* local\n}", wantErr: "route syntax"},
		{name: "route without upstream", input: "modelgate {\n route files.* to\n}", wantErr: "route syntax"},
		{name: "route without operations", input: "modelgate {\n route to a\n}", wantErr: "route syntax"},
		{name: "route with dangling model", input: "modelgate {\n route chat.* to a model\n}", wantErr: "route syntax"},
		{name: "route with to twice", input: "modelgate {\n route chat.* to a to b\n}", wantErr: "given twice"},
		{name: "weights count", input: "modelgate {\n route chat.* to a b {\n weights 1\n }\n}", wantErr: "1 weights for 2 upstreams"},
		{name: "zero weight", input: "modelgate {\n route chat.* to a {\n weights 0\n }\n}", wantErr: "bad weight"},
		{name: "negative retries", input: "modelgate {\n route chat.* to a {\n retries -1\n }\n}", wantErr: "bad retries"},
		{name: "unknown route option", input: "modelgate {\n route chat.* to a {\n sticky\n }\n}", wantErr: `unrecognized route option "sticky"`},
		{name: "unknown upstream type", input: "modelgate {\n upstream x magic\n}", wantErr: `unknown upstream type "magic"`},
		{
			name:  "health probes",
			input: "modelgate {\n health /live /ready\n}",
			want:  Gateway{Health: &HealthConfig{Live: "/live", Ready: "/ready"}},
		},
		{name: "health with one path", input: "modelgate {\n health /live\n}", wantErr: "wrong argument count"},
		{name: "upstream twice", input: "modelgate {\n upstream a {\n base_url http://x\n }\n upstream a {\n base_url http://y\n }\n}", wantErr: `upstream "a" is defined twice`},
		{name: "bad openai option", input: "modelgate {\n upstream a {\n base_uri http://x\n }\n}", wantErr: `unrecognized openai upstream option "base_uri"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var g Gateway
			err := g.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.input))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			ups := g.UpstreamsRaw
			g.UpstreamsRaw = nil
			if tc.upJSON == nil && !reflect.DeepEqual(g, tc.want) {
				t.Fatalf("got %+v\nwant %+v", g, tc.want)
			}
			for name, want := range tc.upJSON {
				var got, exp any
				_ = json.Unmarshal(ups[name], &got)
				_ = json.Unmarshal([]byte(want), &exp)
				if !reflect.DeepEqual(got, exp) {
					t.Fatalf("upstream %s = %s, want %s", name, ups[name], want)
				}
			}
		})
	}
}

func intPtr(n int) *int { return &n }

func TestKeyringRejectsBadKeys(t *testing.T) {
	tests := []struct {
		name string
		keys []KeyConfig
		want string
	}{
		{"empty key (unset env var)", []KeyConfig{{Key: ""}}, "key is empty"},
		{"both key and digest", []KeyConfig{{Key: "a", SHA256: strings.Repeat("0", 64)}}, "not both"},
		{"short digest", []KeyConfig{{SHA256: "abcd"}}, "64 hex digits"},
		{"duplicate", []KeyConfig{{Key: "same"}, {Key: "same"}}, "configured twice"},
		{"bad pattern", []KeyConfig{{Key: "k", Operations: []string{"files.["}}}, "bad operation pattern"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newKeyring(tc.keys, "", nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestMatchOperation(t *testing.T) {
	tests := []struct {
		method, path, op string
		params           map[string]string
	}{
		{"POST", "/chat/completions", "chat.completions.create", nil},
		{"GET", "/files/file-1/content", "files.content", map[string]string{"file_id": "file-1"}},
		{"POST", "/vector_stores/vs_1/search", "vector_stores.search", map[string]string{"vector_store_id": "vs_1"}},
		{"POST", "/vector_stores/vs_1/files", "vector_stores.files.create", map[string]string{"vector_store_id": "vs_1"}},
		{"DELETE", "/vector_stores/vs_1/files/file-2", "vector_stores.files.delete", map[string]string{"vector_store_id": "vs_1", "file_id": "file-2"}},
		{"POST", "/threads/thread_1", "threads.update", map[string]string{"thread_id": "thread_1"}},
		{"POST", "/batches/b1/cancel", "batches.cancel", map[string]string{"batch_id": "b1"}},
		{"GET", "/models", "models.list", nil},
		{"GET", "/chat/completions", "", nil},
		{"GET", "/files//content", "", nil},
		{"POST", "/threads/a/b/c", "", nil},
		{"POST", "/threads/runs", "", nil}, // create-and-run, not an update of thread "runs"
		{"GET", "/threads/runs", "threads.retrieve", map[string]string{"thread_id": "runs"}},
	}
	for _, tc := range tests {
		op, params := matchOperation(tc.method, tc.path)
		got := ""
		if op != nil {
			got = op.ID
		}
		if got != tc.op || (tc.op != "" && !reflect.DeepEqual(params, tc.params)) {
			t.Errorf("%s %s = %q %v, want %q %v", tc.method, tc.path, got, params, tc.op, tc.params)
		}
	}
}
