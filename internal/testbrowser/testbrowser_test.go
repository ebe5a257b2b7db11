package testbrowser

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const page = `<!doctype html><html><head><meta charset="utf-8"><title>t</title><link rel="icon" href="data:,">
<style>:root{color-scheme:light dark} body{background:#fff;color:#000} @media (prefers-color-scheme: dark){body{background:#000;color:#fff}}</style></head>
<body><h1 id="title">Hello from the page</h1><p>Some text so the screenshot is not blank, in several words and lines.</p>
<svg width="300" height="120"><rect x="10" y="10" width="280" height="100" fill="#3a7"/></svg>
<script>%s</script></body></html>`

func serve(t *testing.T, pages map[string]string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.URL.Path == "/needs-key" && r.Header.Get("X-Test-Key") != "k" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestBrowserSeesPagesErrorsAndPixels drives the real Chromium: the text of
// a page, its console errors and exceptions, a screenshot that is not blank
// and one that is, dark mode, and extra headers.
func TestBrowserSeesPagesErrorsAndPixels(t *testing.T) {
	base := serve(t, map[string]string{
		"/clean":     strings.Replace(page, "%s", "", 1),
		"/noisy":     strings.Replace(page, "%s", `console.error("something broke"); undefinedFunction();`, 1),
		"/blank":     `<!doctype html><html><head><link rel="icon" href="data:,"></head><body style="background:#fff"></body></html>`,
		"/needs-key": strings.Replace(page, "%s", "", 1),
	})
	b := Start(t, nil)
	if status := b.Open(base + "/clean"); status != http.StatusOK {
		t.Fatalf("GET /clean: %d", status)
	}
	if got := b.Text("#title"); got != "Hello from the page" {
		t.Errorf("text of #title: %q", got)
	}
	if errs := b.ConsoleErrors(); len(errs) != 0 {
		t.Errorf("a clean page has console errors: %q", errs)
	}
	if err := CheckNotBlank(b.Screenshot(), 0.01); err != nil {
		t.Errorf("the clean page: %v", err)
	}
	if Eval[string](b, `getComputedStyle(document.body).backgroundColor`) != "rgb(255, 255, 255)" {
		t.Error("light mode: the body is not white")
	}
	b.EmulateDarkMode(true)
	if got := Eval[string](b, `getComputedStyle(document.body).backgroundColor`); got != "rgb(0, 0, 0)" {
		t.Errorf("dark mode: the body is %s, want black", got)
	}
	b.EmulateDarkMode(false)

	b.Open(base + "/noisy")
	errs := strings.Join(b.ConsoleErrors(), "\n")
	if !strings.Contains(errs, "something broke") || !strings.Contains(errs, "undefinedFunction") {
		t.Errorf("console errors of /noisy: %q", errs)
	}

	b.Open(base + "/blank")
	if err := CheckNotBlank(b.Screenshot(), 0.01); err == nil {
		t.Error("a blank page's screenshot passes CheckNotBlank")
	}
	if status := b.Open(base + "/needs-key"); status != http.StatusUnauthorized {
		t.Errorf("without the header: %d, want 401", status)
	}

	withKey := Start(t, map[string]string{"X-Test-Key": "k"})
	if status := withKey.Open(base + "/needs-key"); status != http.StatusOK {
		t.Errorf("with the header: %d, want 200", status)
	}
}
