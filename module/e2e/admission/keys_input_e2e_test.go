package admission

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestKeysAPIRefusesBadInput: each bad request to the management API gets
// a 400 envelope naming the field, at the bounds the docs state, and
// changes nothing; an update changes only the fields it gives.
func TestKeysAPIRefusesBadInput(t *testing.T) {
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s {
			name fixed
			owner team-a
		}
		upstream local local {
			data_dir %s
		}
		%s
	}`, gatewaytest.ClientKey, t.TempDir(), managementSite(usageProvider(t))))
	long := strings.Repeat("n", 65)
	past := time.Now().Unix() - 1
	metadata := func(pairs int) string {
		var kv []string
		for i := range pairs {
			kv = append(kv, fmt.Sprintf(`"k%d":"v"`, i))
		}
		return `{"metadata":{` + strings.Join(kv, ",") + `}}`
	}
	cases := []struct{ body, param string }{
		{`{"bogus":1}`, "bogus"},
		{`{"key":"sk-mine"}`, "key"},
		{`{"sha256":"` + strings.Repeat("a", 64) + `"}`, "sha256"},
		{`{"name":"` + long + `"}`, "name"},
		{`{"name":"ok","owner":"` + long + `"}`, "owner"},
		{`{"name":"a\u0007b"}`, "name"},
		{`{"name":"fixed","owner":"team-a"}`, "name"}, // the configured key's
		{`{"limits":{"requests_per_minute":"ten"}}`, "limits.requests_per_minute"},
		{`{"limits":{"tokens_per_minute":-1}}`, "limits.tokens_per_minute"},
		{`{"operations":["chat.["]}`, "operations[0]"},
		{`{"operations":"chat.*"}`, "operations"},
		{metadata(17), "metadata"},
		{`{"metadata":{"k":"` + strings.Repeat("v", 513) + `"}}`, "metadata"},
		{fmt.Sprintf(`{"expires_at":%d}`, past), "expires_at"},
		{`{"expires_at":"tomorrow"}`, "expires_at"},
		{`{"budgets":[{"usd":"ten","period":"day"}]}`, "budgets"},
		{`{"budgets":[{"usd":"1","period":"fortnight"}]}`, "budgets"},
	}
	for _, c := range cases {
		status, reply := manage(t, base, gatewaytest.ManagementAdminKey, "POST", "/keys", c.body)
		if status != http.StatusBadRequest || errorOf(reply)["param"] != c.param {
			t.Errorf("%s: %d %v, want 400 with param %s", c.body, status, reply, c.param)
		}
	}
	// The bounds themselves are taken.
	status, key := manage(t, base, gatewaytest.ManagementAdminKey, "POST", "/keys", `{"name":"`+long[:64]+`","metadata":{`+strings.TrimSuffix(strings.TrimPrefix(metadata(16), `{"metadata":{`), "}}")+`}}`)
	if status != http.StatusCreated {
		t.Fatalf("a key at the bounds: %d %v", status, key)
	}
	id := key["id"].(string)
	// The same name for the same owner is taken.
	if status, reply := manage(t, base, gatewaytest.ManagementAdminKey, "POST", "/keys", `{"name":"`+long[:64]+`"}`); status != http.StatusBadRequest || errorOf(reply)["param"] != "name" {
		t.Errorf("a second key of the same name: %d %v", status, reply)
	}

	// An update changes the fields given, refuses bad ones, keeps the rest.
	if status, reply := manage(t, base, gatewaytest.ManagementAdminKey, "PATCH", "/keys/"+id, `{"limits":{"max_concurrent":-2}}`); status != http.StatusBadRequest || errorOf(reply)["param"] != "limits.max_concurrent" {
		t.Errorf("bad update: %d %v", status, reply)
	}
	status, updated := manage(t, base, gatewaytest.ManagementAdminKey, "PATCH", "/keys/"+id, `{"owner":"team-b","limits":{"requests_per_minute":1}}`)
	if status != http.StatusOK || updated["owner"] != "team-b" || updated["name"] != long[:64] || len(updated["metadata"].(map[string]any)) != 16 {
		t.Fatalf("update: %d %v", status, updated)
	}
	// The limit is in force at once: one request a minute.
	secret := key["secret"].(string)
	if s, _, _ := chatWith(t, base, secret); s != http.StatusOK {
		t.Fatalf("first request: %d", s)
	}
	if s, _, _ := chatWith(t, base, secret); s != http.StatusTooManyRequests {
		t.Fatalf("second request within the minute of an rpm 1 key: %d", s)
	}

	for _, c := range []struct{ method, path, body, param string }{
		{"GET", "/spend?from=yesterday", "", "from"},
		{"GET", "/spend?to=2026-11-01T10:30:00Z", "", "to"},
		{"GET", "/spend?from=2026-11-02&to=2026-11-01", "", "to"},
		{"GET", "/spend?group_by=key,colour", "", "group_by"},
		{"PATCH", "/keys/" + id, `[1]`, ""},
	} {
		status, reply := manage(t, base, gatewaytest.ManagementAdminKey, c.method, c.path, c.body)
		if status != http.StatusBadRequest || errorOf(reply) == nil || (c.param != "" && errorOf(reply)["param"] != c.param) {
			t.Errorf("%s %s: %d %v, want 400 with param %s", c.method, c.path, status, reply, c.param)
		}
	}
	if status, reply := manage(t, base, gatewaytest.ManagementAdminKey, "GET", "/keys/key_nosuchkey", ""); status != http.StatusNotFound || errorOf(reply) == nil {
		t.Errorf("unknown key: %d %v", status, reply)
	}
	if status, reply := manage(t, base, gatewaytest.ManagementAdminKey, "PUT", "/keys", "{}"); status != http.StatusNotFound || errorOf(reply) == nil {
		t.Errorf("unknown route: %d %v", status, reply)
	}
}

// TestIssuedKeyOnTheDashboard: an issued key is listed with the
// configured ones, and the month's spend table shows its cost by owner,
// model and upstream; an update with null clears its expiry.
func TestIssuedKeyOnTheDashboard(t *testing.T) {
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		upstream local local {
			data_dir %s
		}
		dashboard /dashboard
		%s
	}`, gatewaytest.ClientKey, t.TempDir(), managementSite(usageProvider(t))))
	status, key := manage(t, base, gatewaytest.ManagementAdminKey, "POST", "/keys", fmt.Sprintf(`{"name":"dash","owner":"team-d","expires_at":%d}`, time.Now().Unix()+3600))
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, key)
	}
	for range 2 {
		if s, _, _ := chatWith(t, base, key["secret"].(string)); s != http.StatusOK {
			t.Fatalf("chat: %d", s)
		}
	}
	page := string(gatewaytest.GetPage(t, base+"/dashboard"))
	_, spendTable, _ := strings.Cut(page, `<table id="spend">`)
	spendTable, _, _ = strings.Cut(spendTable, `</table>`)
	// 2 * 450 microdollars.
	want := `<tr data-key="dash"><td>dash</td><td>team-d</td><td>gpt-4o-mini</td><td>priced</td><td class="n">2</td><td class="n spend">0.0009</td></tr>`
	if !strings.Contains(spendTable, want) {
		t.Errorf("the spend table does not show the key's spend:\n%s", spendTable)
	}
	if spend, _ := dashboardSpend(t, base, "dash"); spend != "0.0009" {
		t.Errorf("the keys table shows spend %s for the issued key, want 0.0009", spend)
	}
	status, updated := manage(t, base, gatewaytest.ManagementAdminKey, "PATCH", "/keys/"+key["id"].(string), `{"expires_at":null}`)
	if status != http.StatusOK || updated["expires_at"] != nil || updated["owner"] != "team-d" {
		t.Errorf("clearing the expiry: %d %v", status, updated)
	}
}

// TestIssuedKeysAcrossReload: with a refresh too slow to matter, a reload
// of the config finds the issued keys at once (they are read as the config
// starts, once its store is open), keeps their limit state, and loses none of the spend the
// old config held (written as it stops).
func TestIssuedKeysAcrossReload(t *testing.T) {
	port := testgateway.FreePort(t)
	cfg := testgateway.GlobalOptions + fmt.Sprintf(`http://127.0.0.1:%d {
	modelgate {
		upstream local local {
			data_dir %s
		}
		%s
	}
}`, port, t.TempDir(), strings.Replace(managementSite(usageProvider(t)), "refresh 200ms", "refresh 1h", 1))
	testgateway.Load(t, cfg)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	status, key := manage(t, base, gatewaytest.ManagementAdminKey, "POST", "/keys", `{"name":"kept","limits":{"requests_per_minute":2}}`)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, key)
	}
	secret := key["secret"].(string)
	if s, _, _ := chatWith(t, base, secret); s != http.StatusOK {
		t.Fatalf("before the reload: %d", s)
	}
	testgateway.Reload(t, cfg)
	if s, _, _ := chatWith(t, base, secret); s != http.StatusOK {
		t.Fatalf("after the reload: %d", s)
	}
	if s, _, _ := chatWith(t, base, secret); s != http.StatusTooManyRequests {
		t.Fatalf("third request of an rpm 2 key across the reload: %d", s)
	}
	_, report := manage(t, base, gatewaytest.ManagementAdminKey, "GET", "/spend?group_by=key", "")
	if total := report["total"].(map[string]any); total["cost_usd"] != "0.0009" || total["requests"] != float64(2) {
		t.Errorf("spend after the reload: %v, want the two requests' 0.0009 USD", total)
	}
}
