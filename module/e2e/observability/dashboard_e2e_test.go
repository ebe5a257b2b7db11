package observability

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testbrowser"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestDashboardInChromium serves the quick start (whose dashboard is on)
// with a rate-limited key, a provider whose replies break the schema and a
// provider that holds a batch's requests, sends traffic, and opens the
// dashboard in a real headless Chromium: the 429, the reply-check finding
// with its example, the models table (live and batch apart), the running
// batch with its rate and ETA and the plots' axes are on the page; at 1280
// and 390 px nothing runs past the window's edge; the screenshots (saved,
// see screenshotDir) are not blank in light and dark mode, and the page
// logs no errors.
func TestDashboardInChromium(t *testing.T) {
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"broken-model","choices":[{"index":0,"message":{"role":"assistant","content":42},"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)
	}))
	t.Cleanup(broken.Close)
	slow, release := gatewaytest.SlowUpstream(t, 1)
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
	batch, err := dev.Batches.New(ctx, openai.BatchNewParams{InputFileID: gatewaytest.UploadBatchFile(t, dev, gatewaytest.BatchInput(3, "slow-model")),
		Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	gatewaytest.PollBatch(t, dev, batch.ID, openai.BatchStatusInProgress)
	// The slow upstream answers the first line and holds the others: the
	// batch runs with a rate and an ETA.
	for i := 0; ; i++ {
		b, err := dev.Batches.Get(ctx, batch.ID)
		if err != nil {
			t.Fatal(err)
		}
		if b.RequestCounts.Completed >= 1 {
			break
		}
		if i == 3000 {
			t.Fatalf("the batch's first line never completed: %+v", b.RequestCounts)
		}
		time.Sleep(20 * time.Millisecond)
	}

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
		{`#models tr[data-model="reference"] .live`, "3"},
		{`#models tr[data-model="reference"] .errors`, "1"},
		{`#models tr[data-model="slow-model"] .batch`, "1"},
		{`#models tr[data-model="slow-model"] .live`, "0"},
		{`tr[data-key="dev"] .batch`, "1"},
		{`tr[data-batch="` + batch.ID + `"] .rate`, "/min"},
		{`#facts .uptime`, "s"},
	}
	for _, c := range checks {
		if got := b.Text(c.selector); !strings.Contains(got, c.want) {
			t.Errorf("dashboard %s: %q, want %q in it", c.selector, got, c.want)
		}
	}
	if eta := b.Text(`tr[data-batch="` + batch.ID + `"] .eta`); !regexp.MustCompile(`^\d+(h|m|s)`).MatchString(eta) {
		t.Errorf("the running batch's ETA: %q", eta)
	}
	checkPlotAxes(t, b)
	dir := screenshotDir(t)
	for _, width := range []int64{1280, 390} {
		b.SetWidth(width)
		if over := testbrowser.Eval[float64](b, `document.documentElement.scrollWidth - document.documentElement.clientWidth`); over > 0 {
			t.Errorf("at %d px the page is %v px wider than the window", width, over)
		}
		if cut := testbrowser.Eval[float64](b, `[...document.querySelectorAll('.scroll, figure')].filter(d => d.getBoundingClientRect().right > document.documentElement.clientWidth + 1).length`); cut != 0 {
			t.Errorf("at %d px %v tables or plots run past the window's edge", width, cut)
		}
		for _, dark := range []bool{false, true} {
			b.EmulateDarkMode(dark)
			mode, bg := "light", "rgb(255, 255, 255)"
			if dark {
				mode, bg = "dark", "rgb(17, 20, 24)"
			}
			if got := testbrowser.Eval[string](b, `getComputedStyle(document.body).backgroundColor`); got != bg {
				t.Errorf("%s mode background at %d px: %s", mode, width, got)
			}
			png := b.Screenshot()
			if err := testbrowser.CheckNotBlank(png, 0.02); err != nil {
				t.Errorf("%s mode at %d px: %v", mode, width, err)
			}
			name := filepath.Join(dir, fmt.Sprintf("dashboard-%d-%s.png", width, mode))
			if err := os.WriteFile(name, png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("screenshots in %s", dir)
	if errs := b.ConsoleErrors(); len(errs) != 0 {
		t.Errorf("the dashboard logs errors in the browser: %q", errs)
	}
}

// checkPlotAxes checks the plots in the page: each has a y axis with three
// labels and an x axis with clock times (HH:MM), and the throughput plot
// has its batch line.
func checkPlotAxes(t *testing.T, b *testbrowser.Browser) {
	t.Helper()
	if n := testbrowser.Eval[float64](b, `document.querySelectorAll('#plots svg.plot').length`); n != 2 {
		t.Fatalf("%v plots, want 2", n)
	}
	for i := range 2 {
		ys := testbrowser.Eval[[]string](b, fmt.Sprintf(`[...document.querySelectorAll('#plots svg.plot')[%d].querySelectorAll('.y-axis text')].map(e => e.textContent)`, i))
		xs := testbrowser.Eval[[]string](b, fmt.Sprintf(`[...document.querySelectorAll('#plots svg.plot')[%d].querySelectorAll('.x-axis text')].map(e => e.lastChild.textContent)`, i))
		if len(ys) != 3 || len(xs) < 4 {
			t.Errorf("plot %d: y labels %q, x labels %q", i, ys, xs)
		}
		for _, x := range xs {
			if !regexp.MustCompile(`^\d\d:\d\d$`).MatchString(x) {
				t.Errorf("plot %d: x label %q is not a clock time", i, x)
			}
		}
	}
	if n := testbrowser.Eval[float64](b, `document.querySelectorAll('#plots polyline.batch').length`); n != 1 {
		t.Errorf("%v batch lines in the plots, want 1", n)
	}
}

// screenshotDir is where the dashboard's screenshots go:
// MODELGATE_TEST_ARTIFACTS when set (CI keeps it), else the test's
// temporary folder.
func screenshotDir(t *testing.T) string {
	if dir := os.Getenv("MODELGATE_TEST_ARTIFACTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.TempDir()
}

// TestDashboardNeedsItsAdminKey: with admin keys, the dashboard answers
// 401 (with a basic auth challenge, so a browser asks) without one or with
// a wrong one, and the page with one, as a bearer token or a basic auth
// password; the API's keys do not open it, and it is read-only.
func TestDashboardNeedsItsAdminKey(t *testing.T) {
	t.Setenv("DASHBOARD_KEY", "s3cret-admin")
	base := testgateway.Start(t, `
	modelgate {
		key `+gatewaytest.ClientKey+`
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
		"the API key":    func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+gatewaytest.ClientKey) },
		"wrong password": func(r *http.Request) { r.SetBasicAuth("admin", "nope") },
	} {
		status, h, body := get(http.MethodGet, auth)
		if status != http.StatusUnauthorized || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Basic ") || !gatewaytest.IsEnvelope(body) || strings.Contains(body, "<table") {
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
