// Package testbrowser drives a real headless Chromium for tests that check
// what a person sees in a browser (the dashboard, the conformance HTML
// report): it starts Debian's chromium with a fresh profile, loads a page,
// collects every console error, takes screenshots and checks they are not
// blank. The browser's path comes from MODELGATE_TEST_CHROMIUM, which
// scripts/services/chromium.sh prints; without it a test skips, or fails
// when MODELGATE_REQUIRE_SERVICES=1 (CI).
package testbrowser

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/modelgate/modelgate/internal/testservice"
)

// Flags are the command line flags Chromium runs with, besides a fresh
// --user-data-dir and the debugging port chromedp adds: headless, no
// sandbox (tests run as root in containers), and nothing that reaches the
// network on its own.
var Flags = []string{
	"headless", "no-sandbox", "disable-gpu", "disable-quic", "no-first-run",
	"disable-background-networking", "disable-component-update", "disable-sync",
}

// browserTimeout bounds everything one browser does in a test, so a hung
// browser fails the test instead of stalling the suite. It is a bound on
// work, not an assertion of speed.
const browserTimeout = 2 * time.Minute

// Browser is one headless Chromium with one tab, stopped when the test ends.
type Browser struct {
	t   testing.TB
	ctx context.Context

	mu     sync.Mutex
	errors []string
	synced chan string // sync marks seen in the console, in order
	syncs  int
}

// Start starts Chromium with Flags and a profile in a fresh temporary
// folder. headers, when given, are sent with every request the page makes
// (e.g. an admin key).
func Start(t testing.TB, headers map[string]string) *Browser {
	t.Helper()
	path := testservice.Env(t, "MODELGATE_TEST_CHROMIUM", "Chromium", "scripts/services/chromium.sh")
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	for _, f := range Flags {
		opts = append(opts, chromedp.Flag(f, true))
	}
	timeout, cancelTimeout := context.WithTimeout(context.Background(), browserTimeout)
	alloc, cancelAlloc := chromedp.NewExecAllocator(timeout, opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	collected := make(chan struct{})
	t.Cleanup(func() {
		cancelCtx()
		<-collected
		cancelAlloc()
		cancelTimeout()
	})
	if err := chromedp.Do(ctx); err != nil {
		close(collected)
		t.Fatalf("starting Chromium (%s): %v", path, err)
	}
	b := &Browser{t: t, ctx: ctx, synced: make(chan string, 1)}
	messages := chromedp.Console(ctx)
	go func() {
		defer close(collected)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleDebug && strings.HasPrefix(m.Text, syncMark) {
				b.synced <- m.Text
				continue
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException || m.Type == chromedp.ConsoleType("assert") {
				b.mu.Lock()
				b.errors = append(b.errors, fmt.Sprintf("%s %s:%d: %s", m.Type, m.URL, m.Line+1, m.Text))
				b.mu.Unlock()
			}
		}
	}()
	if len(headers) > 0 {
		h := network.Headers{}
		for k, v := range headers {
			h[k] = v
		}
		if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: h}); err != nil {
			t.Fatalf("setting the browser's extra headers: %v", err)
		}
	}
	return b
}

// Open loads url in the tab, waits for the page to have loaded, and returns
// the HTTP status of the document.
func (b *Browser) Open(url string) int {
	b.t.Helper()
	resp, err := chromedp.RunResponse(b.ctx, chromedp.Navigate(url))
	if err != nil {
		b.t.Fatalf("loading %s in Chromium: %v", url, err)
	}
	if resp == nil {
		b.t.Fatalf("loading %s in Chromium: no response", url)
	}
	return int(resp.Status)
}

// Text returns the text a person sees in the first element the CSS
// selector matches in the loaded page (e.g. "body"), or "" when none does.
func (b *Browser) Text(selector string) string {
	b.t.Helper()
	return Eval[string](b, fmt.Sprintf(`document.querySelector(%q)?.innerText ?? ""`, selector))
}

// Eval evaluates a JavaScript expression in b's page and returns its value.
func Eval[T any](b *Browser, expression string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expression))
	if err != nil {
		b.t.Fatalf("evaluating %q: %v", expression, err)
	}
	return v
}

// EmulateDarkMode makes the page see prefers-color-scheme: dark (on) or
// light (off).
func (b *Browser) EmulateDarkMode(on bool) {
	b.t.Helper()
	scheme := "light"
	if on {
		scheme = "dark"
	}
	_, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	})
	if err != nil {
		b.t.Fatalf("emulating prefers-color-scheme: %s: %v", scheme, err)
	}
}

// SetWidth lays the page out for a window width CSS pixels wide (and 900
// high), as a narrow phone or a wide screen would.
func (b *Browser) SetWidth(width int64) {
	b.t.Helper()
	_, err := chromedp.Call(b.ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: width, Height: 900, DeviceScaleFactor: 1})
	if err != nil {
		b.t.Fatalf("setting the window width to %d: %v", width, err)
	}
}

// syncMark starts the console messages ConsoleErrors writes to know that
// every message before them has been collected.
const syncMark = "testbrowser: collected up to here "

// ConsoleErrors returns what went wrong in every page loaded so far:
// console errors, uncaught exceptions, failed or refused loads. It first
// writes a mark to the console and waits for it, so every message the page
// wrote before the call is in.
func (b *Browser) ConsoleErrors() []string {
	b.t.Helper()
	b.syncs++
	mark := fmt.Sprintf("%s%d", syncMark, b.syncs)
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf("console.debug(%q)", mark))); err != nil {
		b.t.Fatalf("writing a mark to the console: %v", err)
	}
	for seen := ""; seen != mark; {
		select {
		case seen = <-b.synced:
		case <-b.ctx.Done():
			b.t.Fatalf("waiting for the console to reach %q: %v", mark, b.ctx.Err())
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// Screenshot returns a PNG of the whole page.
func (b *Browser) Screenshot() []byte {
	b.t.Helper()
	buf, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("taking a screenshot: %v", err)
	}
	return buf
}

// CheckNotBlank returns an error unless the PNG shows something: at least
// minShare of its pixels differ from its top-left pixel (the background)
// and it has at least three colours.
func CheckNotBlank(pngData []byte, minShare float64) error {
	img, err := png.Decode(bytes.NewReader(pngData))
	if err != nil {
		return fmt.Errorf("the screenshot is no PNG: %w", err)
	}
	bounds := img.Bounds()
	if bounds.Empty() {
		return fmt.Errorf("the screenshot is empty (%v)", bounds)
	}
	bg := rgba(img, bounds.Min.X, bounds.Min.Y)
	colours := map[[4]uint32]bool{}
	differ := 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			c := rgba(img, x, y)
			if c != bg {
				differ++
			}
			if len(colours) < 3 {
				colours[c] = true
			}
		}
	}
	share := float64(differ) / float64(bounds.Dx()*bounds.Dy())
	if share < minShare || len(colours) < 3 {
		return fmt.Errorf("the screenshot is blank: %.4f of %dx%d pixels differ from the background (want %.4f), %d colours", share, bounds.Dx(), bounds.Dy(), minShare, len(colours))
	}
	return nil
}

func rgba(img image.Image, x, y int) [4]uint32 {
	r, g, b, a := img.At(x, y).RGBA()
	return [4]uint32{r, g, b, a}
}
