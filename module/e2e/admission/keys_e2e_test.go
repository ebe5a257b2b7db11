package admission

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/internal/testpg"
)

// managementSite is what a test gateway adds to its modelgate block: the
// management API, refreshed every 200ms, and chat priced at the shipped
// table's rates through provider, with the cost trailer.
func managementSite(provider string) string {
	return fmt.Sprintf(`
		management /manage {
			admin_key %s
			refresh 200ms
		}
		upstream priced {
			base_url %s/v1
		}
		route chat.completions.create to priced
		cost_header`, gatewaytest.ManagementAdminKey, provider)
}

// usageProvider is a provider fake answering every chat completion of
// gpt-4o-mini with 1000 prompt and 500 completion tokens: 450 microdollars
// at the shipped table's rates.
func usageProvider(t *testing.T) string {
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, strings.Replace(gatewaytest.ToolCallCompletion, `{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}`,
			`{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}`, 1))
	})
	return provider.URL
}

// manage sends a management request with the admin key (none when
// adminKey is "") and returns the status and decoded reply.
func manage(t *testing.T, base, adminKey, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, base+"/manage"+path, strings.NewReader(body))
	if adminKey != "" {
		req.Header.Set("Authorization", "Bearer "+adminKey)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	return resp.StatusCode, out
}

// chatWith sends a chat completion with key and returns the status, the
// error code (if any) and the cost trailer.
func chatWith(t *testing.T, base, key string) (status int, code, cost string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}]}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var env struct {
		Error struct{ Code string } `json:"error"`
	}
	json.Unmarshal(data, &env)
	return resp.StatusCode, env.Error.Code, resp.Trailer.Get("X-Modelgate-Cost-Usd")
}

// eventually polls check every 50ms until it holds or within passes;
// it reports whether it held and how long that took.
func eventually(within time.Duration, check func() bool) (bool, time.Duration) {
	start := time.Now()
	for {
		if check() {
			return true, time.Since(start)
		}
		if time.Since(start) > within {
			return false, time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// onBoth waits until want(status, code) holds for key on both gateways,
// within 2s of the change; the costs of the replies add to spent.
func onBoth(t *testing.T, bases [2]string, key, what string, spent *int64, want func(status int, code string) bool) {
	t.Helper()
	for _, base := range bases {
		var status int
		var code string
		ok, took := eventually(2*time.Second, func() bool {
			var cost string
			status, code, cost = chatWith(t, base, key)
			if cost != "" {
				*spent += usdToPico(t, cost)
			}
			return want(status, code)
		})
		if !ok {
			t.Fatalf("%s: %s still answers %d %q after %v", what, base, status, code, took)
		}
		t.Logf("%s: %s after %v", what, base, took.Round(time.Millisecond))
	}
}

func works(status int, _ string) bool { return status == http.StatusOK }

func refused(status int, code string) bool {
	return status == http.StatusUnauthorized && code == "invalid_api_key"
}

// TestKeysAPIOnTwoSQLiteInstances: two gateway processes on one SQLite
// data folder share the keys the management API issues and their spend.
func TestKeysAPIOnTwoSQLiteInstances(t *testing.T) {
	dataDir := t.TempDir()
	testKeysOnTwoInstances(t, "data_dir "+dataDir, func(secrets []string) {
		// Neither the database nor its journal holds a secret in clear.
		files, _ := filepath.Glob(filepath.Join(dataDir, "modelgate.db*"))
		if len(files) == 0 {
			t.Fatal("no database files")
		}
		for _, f := range files {
			data, _ := os.ReadFile(f)
			for _, s := range secrets {
				if bytes.Contains(data, []byte(s)) || bytes.Contains(data, []byte(s[len(s)-16:])) {
					t.Errorf("%s holds a secret in clear", filepath.Base(f))
				}
			}
		}
	})
}

// TestKeysAPIOnTwoPostgresInstances is the same on one PostgreSQL
// database.
func TestKeysAPIOnTwoPostgresInstances(t *testing.T) {
	testKeysOnTwoInstances(t, "postgres "+testpg.DSN(t), nil)
}

func testKeysOnTwoInstances(t *testing.T, store string, checkStored func(secrets []string)) {
	provider := usageProvider(t)
	logFile := filepath.Join(t.TempDir(), "debug.log")
	global := fmt.Sprintf("log everything {\n\t\toutput file %s\n\t\tlevel DEBUG\n\t}", logFile)
	var bases [2]string
	for i := range bases {
		bases[i] = gatewaytest.StartChildGlobal(t, global, store, managementSite(provider), testgateway.FreePort(t)).Base
	}
	a, b := bases[0], bases[1]

	// Without its credential, or with a client key, the API refuses.
	for _, key := range []string{"", gatewaytest.ClientKey, "adm-wrong"} {
		if status, reply := manage(t, a, key, "GET", "/keys", ""); status != http.StatusUnauthorized || reply["error"] == nil {
			t.Fatalf("key %q: %d %v", key, status, reply)
		}
	}
	if status, _ := manage(t, a, "", "POST", "/keys", `{"name":"x"}`); status != http.StatusUnauthorized {
		t.Fatalf("create without credential: %d", status)
	}

	// Created on one instance, the key works on both within 2s.
	status, created := manage(t, a, gatewaytest.ManagementAdminKey, "POST", "/keys", `{"name":"ci","owner":"team-a","metadata":{"team":"a"},"operations":["chat.*"]}`)
	secret, _ := created["secret"].(string)
	id, _ := created["id"].(string)
	if status != http.StatusCreated || secret == "" || id == "" || created["status"] != "active" || created["owner"] != "team-a" {
		t.Fatalf("create: %d %v", status, created)
	}
	// The instance that created it applies it before answering.
	status, _, cost := chatWith(t, a, secret)
	if status != http.StatusOK {
		t.Fatalf("the new key on the instance that created it: %d", status)
	}
	pico := usdToPico(t, cost)
	onBoth(t, bases, secret, "created", &pico, works)
	// The secret is shown once: never in a read.
	if _, got := manage(t, b, gatewaytest.ManagementAdminKey, "GET", "/keys/"+id, ""); got["secret"] != nil || got["name"] != "ci" {
		t.Fatalf("get: %v", got)
	}
	_, list := manage(t, b, gatewaytest.ManagementAdminKey, "GET", "/keys", "")
	if body, _ := json.Marshal(list); strings.Contains(string(body), secret) || !strings.Contains(string(body), `"source":"config"`) {
		t.Fatalf("list: %s", body)
	}

	// Spend: the sum of the exchanges' costs on both instances, to the
	// picodollar, once each instance has written it.
	for i := 0; i < 3; i++ {
		for _, base := range bases {
			status, _, cost := chatWith(t, base, secret)
			if status != http.StatusOK {
				t.Fatalf("chat: %d", status)
			}
			pico += usdToPico(t, cost)
		}
	}
	if pico != 9*450_000_000 {
		t.Fatalf("the exchanges cost %d picodollars, want 9 * 450 microdollars", pico)
	}
	var line map[string]any
	ok, _ := eventually(3*time.Second, func() bool {
		_, report := manage(t, a, gatewaytest.ManagementAdminKey, "GET", "/spend?group_by=key,owner", "")
		line = nil
		data, _ := report["data"].([]any)
		for _, l := range data {
			if l := l.(map[string]any); l["key_name"] == "ci" {
				line = l
			}
		}
		return line != nil && line["cost_picodollars"] == float64(pico)
	})
	if !ok || line["owner"] != "team-a" || line["cost_usd"] != "0.00405" || line["requests"] != float64(9) || line["model"] != nil {
		t.Fatalf("spend of key ci: %v, want %d picodollars (0.00405 USD) over 9 requests", line, pico)
	}

	// Rotated on the other instance: the old secret is refused on both,
	// the new one works on both.
	status, rotated := manage(t, b, gatewaytest.ManagementAdminKey, "POST", "/keys/"+id+"/rotate", "")
	newSecret, _ := rotated["secret"].(string)
	if status != http.StatusOK || newSecret == "" || newSecret == secret || rotated["id"] != id {
		t.Fatalf("rotate: %d %v", status, rotated)
	}
	var ignored int64
	onBoth(t, bases, secret, "old secret after rotation", &ignored, refused)
	onBoth(t, bases, newSecret, "new secret after rotation", &ignored, works)

	// Revoked: refused on both.
	if status, revoked := manage(t, a, gatewaytest.ManagementAdminKey, "DELETE", "/keys/"+id, ""); status != http.StatusOK || revoked["status"] != "revoked" {
		t.Fatalf("revoke: %d %v", status, revoked)
	}
	onBoth(t, bases, newSecret, "revoked", &ignored, refused)
	if status, reply := manage(t, b, gatewaytest.ManagementAdminKey, "POST", "/keys/"+id+"/rotate", ""); status != http.StatusConflict || errorOf(reply)["code"] != "key_revoked" {
		t.Fatalf("rotating a revoked key: %d %v", status, reply)
	}

	// A key that expires: it works, then is refused on both.
	expires := time.Now().Unix() + 2
	status, expiring := manage(t, a, gatewaytest.ManagementAdminKey, "POST", "/keys", fmt.Sprintf(`{"name":"short","expires_at":%d}`, expires))
	short, _ := expiring["secret"].(string)
	if status != http.StatusCreated || expiring["expires_at"] != float64(expires) {
		t.Fatalf("create expiring: %d %v", status, expiring)
	}
	onBoth(t, bases, short, "expiring key before its expiry", &ignored, works)
	for _, base := range bases {
		ok, _ := eventually(4*time.Second, func() bool { s, c, _ := chatWith(t, base, short); return refused(s, c) })
		if !ok || time.Now().Unix() < expires {
			t.Fatalf("%s: the key is not refused after its expiry", base)
		}
	}

	// The configured key cannot be changed through the API.
	var configID string
	for _, k := range list["data"].([]any) {
		if k := k.(map[string]any); k["source"] == "config" {
			configID = k["id"].(string)
			// Listed with the name and owner it has by default.
			if k["name"] != gatewaytest.Sha256Hex(gatewaytest.ClientKey)[:8] || k["owner"] != k["name"] {
				t.Errorf("the configured key is listed as %v", k)
			}
		}
	}
	if status, got := manage(t, b, gatewaytest.ManagementAdminKey, "GET", "/keys/"+configID, ""); status != http.StatusOK || got["source"] != "config" {
		t.Errorf("get the configured key: %d %v", status, got)
	}
	for _, req := range [][2]string{{"DELETE", ""}, {"POST", "/rotate"}, {"PATCH", ""}} {
		status, reply := manage(t, a, gatewaytest.ManagementAdminKey, req[0], "/keys/"+configID+req[1], `{"name":"y"}`)
		if status != http.StatusConflict || errorOf(reply)["code"] != "key_in_config" {
			t.Fatalf("%s %s on a configured key: %d %v", req[0], req[1], status, reply)
		}
	}
	if status, _, _ := chatWith(t, a, gatewaytest.ClientKey); status != http.StatusOK {
		t.Fatalf("the configured key: %d", status)
	}

	// No secret is logged.
	logs, err := os.ReadFile(logFile)
	if err != nil || !strings.Contains(string(logs), "key issued") {
		t.Fatalf("the debug log does not show the keys issued (%v)", err)
	}
	for _, s := range []string{secret, newSecret, short} {
		if strings.Contains(string(logs), s) || strings.Contains(string(logs), s[len(s)-16:]) {
			t.Errorf("the log holds a secret in clear")
		}
	}
	if checkStored != nil {
		checkStored([]string{secret, newSecret, short})
	}
}

func errorOf(reply map[string]any) map[string]any {
	e, _ := reply["error"].(map[string]any)
	return e
}

// usdToPico reads a cost trailer (USD, at most 12 decimals).
func usdToPico(t *testing.T, usd string) int64 {
	t.Helper()
	whole, frac, _ := strings.Cut(usd, ".")
	w, err1 := strconv.ParseInt(whole, 10, 64)
	f, err2 := strconv.ParseInt((frac + "000000000000")[:12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("cost %q", usd)
	}
	return w*1_000_000_000_000 + f
}
