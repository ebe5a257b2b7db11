package modelgate_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/testbrowser"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestDashboardInChromium serves the quick start (whose dashboard is on)
// with a rate-limited key, a provider whose replies break the schema and a
// provider that holds a batch's requests, sends traffic, and opens the
// dashboard in a real headless Chromium: the 429, the reply-check finding
// with its example and the running batch are on the page, the screenshot
// is not blank in light and dark mode, and the page logs no errors.
func TestDashboardInChromium(t *testing.T) {
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"broken-model","choices":[{"index":0,"message":{"role":"assistant","content":42},"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)
	}))
	t.Cleanup(broken.Close)
	slow, release := slowUpstream(t, 0)
	t.Cleanup(release)
	base := testgateway.Quickstart(t, fmt.Sprintf(`
		key sk-limited {
			name limited
			rpm 1
		}
		upstream slow {
			base_url %s/v1
		}
		upstream broken {
			base_url %s/v1
		}
		route chat.completions.create model slow-model to slow
		route chat.completions.create model broken-model to broken
`, slow.URL, broken.URL))
	ctx := context.Background()
	dev := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testgateway.QuickstartDevKey), option.WithMaxRetries(0))
	limited := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-limited"), option.WithMaxRetries(0))
	hello := func(model string) openai.ChatCompletionNewParams {
		return openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello")}}
	}
	if _, err := dev.Chat.Completions.New(ctx, hello("reference")); err != nil {
		t.Fatal(err)
	}
	if _, err := limited.Chat.Completions.New(ctx, hello("reference")); err != nil {
		t.Fatal(err)
	}
	var apiErr *openai.Error
	if _, err := limited.Chat.Completions.New(ctx, hello("reference")); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("second request of a 1 rpm key: %v, want 429", err)
	}
	if _, err := dev.Chat.Completions.New(ctx, hello("broken-model")); err != nil {
		t.Fatalf("a nonconforming reply is reported, not refused: %v", err)
	}
	batch, err := dev.Batches.New(ctx, openai.BatchNewParams{InputFileID: uploadBatchFile(t, dev, batchInput(3, "slow-model")),
		Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	pollBatch(t, dev, batch.ID, openai.BatchStatusInProgress)

	b := testbrowser.Start(t, nil)
	if status := b.Open(base + "/dashboard"); status != http.StatusOK {
		t.Fatalf("GET /dashboard in Chromium: %d", status)
	}
	checks := []struct{ selector, want string }{
		{`tr[data-key="limited"] .requests`, "2"},
		{`tr[data-key="limited"] .refusals`, "1"},
		{`tr[data-key="limited"] .headroom`, "requests: 0 of 1"},
		{`tr[data-key="dev"] .refusals`, "0"},
		{`tr[data-upstream="broken"] .kind`, "chat.completions.create choices[*].message.content"},
		{`tr[data-upstream="broken"] .count`, "1"},
		{`tr[data-upstream="broken"] .example`, "choices[0].message.content: must be of type"},
		{`tr[data-upstream="reference"] .requests`, "2"},
		{`tr[data-batch="` + batch.ID + `"] .status`, "in_progress"},
		{`#recent`, "429"},
		{`#plots`, "Requests per second"},
	}
	for _, c := range checks {
		if got := b.Text(c.selector); !strings.Contains(got, c.want) {
			t.Errorf("dashboard %s: %q, want %q in it", c.selector, got, c.want)
		}
	}
	if err := testbrowser.CheckNotBlank(b.Screenshot(), 0.02); err != nil {
		t.Errorf("light mode: %v", err)
	}
	b.EmulateDarkMode(true)
	if bg := testbrowser.Eval[string](b, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(17, 20, 24)" {
		t.Errorf("dark mode background: %s", bg)
	}
	if err := testbrowser.CheckNotBlank(b.Screenshot(), 0.02); err != nil {
		t.Errorf("dark mode: %v", err)
	}
	if errs := b.ConsoleErrors(); len(errs) != 0 {
		t.Errorf("the dashboard logs errors in the browser: %q", errs)
	}
}

// TestDashboardNeedsItsAdminKey: with admin keys, the dashboard answers
// 401 (with a basic auth challenge, so a browser asks) without one or with
// a wrong one, and the page with one, as a bearer token or a basic auth
// password; the API's keys do not open it, and it is read-only.
func TestDashboardNeedsItsAdminKey(t *testing.T) {
	t.Setenv("DASHBOARD_KEY", "s3cret-admin")
	base := testgateway.Start(t, `
	modelgate {
		key `+clientKey+`
		dashboard /ops/ {
			admin_key {env.DASHBOARD_KEY}
		}
	}`)
	get := func(method string, auth func(*http.Request)) (int, http.Header, string) {
		req, _ := http.NewRequest(method, base+"/ops", nil)
		auth(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(body)
	}
	for name, auth := range map[string]func(*http.Request){
		"no key":         func(*http.Request) {},
		"wrong key":      func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret-admin-not") },
		"the API key":    func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+clientKey) },
		"wrong password": func(r *http.Request) { r.SetBasicAuth("admin", "nope") },
	} {
		status, h, body := get(http.MethodGet, auth)
		if status != http.StatusUnauthorized || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Basic ") || !isEnvelope(body) || strings.Contains(body, "<table") {
			t.Errorf("%s: %d %q %s, want 401 with a basic challenge in the envelope", name, status, h.Get("WWW-Authenticate"), body)
		}
	}
	for name, auth := range map[string]func(*http.Request){
		"bearer":   func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret-admin") },
		"password": func(r *http.Request) { r.SetBasicAuth("anyone", "s3cret-admin") },
	} {
		status, h, body := get(http.MethodGet, auth)
		if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(body, `<table id="keys">`) {
			t.Errorf("%s: %d %s", name, status, h.Get("Content-Type"))
		}
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("%s: CSP %q lets the page load from elsewhere", name, csp)
		}
	}
	if status, _, _ := get(http.MethodPost, func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret-admin") }); status != http.StatusMethodNotAllowed {
		t.Errorf("POST with the admin key: %d, want 405", status)
	}
}
