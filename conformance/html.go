package conformance

import (
	"fmt"
	"html/template"
	"io"
	"strings"
)

// WriteHTML writes the report as one self-contained HTML page: no script,
// no external asset (its Content-Security-Policy forbids loading any), for
// a browser without a server, in light and dark mode. It shows the
// summary, each failure with its spec sentence, request, response excerpt
// and expected vs seen, the skips, the coverage matrix and the sentences
// exercised.
func (r *Report) WriteHTML(w io.Writer) error {
	if err := htmlReport.Execute(w, r); err != nil {
		return fmt.Errorf("writing the HTML report: %w", err)
	}
	return nil
}

var htmlReport = template.Must(template.New("report").Funcs(template.FuncMap{
	"statuses":  statusList,
	"sentences": func(id string) string { return strings.Join(SentencesOf(id), ", ") },
	"count":     func(r *Report, s Status) int { return r.Count(s) },
	"pass":      func() Status { return Pass },
	"fail":      func() Status { return Fail },
	"skip":      func() Status { return Skip },
	"warn":      func() Status { return Warn },
	"unsup":     func() Status { return Unsupported },
	"seconds":   func(ms int64) string { return fmt.Sprintf("%.1f", float64(ms)/1000) },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width"><meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
<title>conformance of {{.Target}}</title>
<style>
:root{--bg:#fff;--fg:#1b1f23;--muted:#57606a;--line:#d0d7de;--code:#f6f8fa;--pass:#1a7f37;--fail:#cf222e;--skip:#9a6700;color-scheme:light dark}
@media (prefers-color-scheme: dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#8d96a0;--line:#30363d;--code:#161b22;--pass:#3fb950;--fail:#f85149;--skip:#d29922}}
body{background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:1.5em}
h1{font-size:1.5em;margin:0 0 .3em}h2{font-size:1.2em;margin:1.6em 0 .5em;border-bottom:1px solid var(--line);padding-bottom:.2em}
.muted{color:var(--muted)}
.cards{display:flex;gap:1em;flex-wrap:wrap;margin:1em 0}
.card{border:1px solid var(--line);border-radius:8px;padding:.6em 1.2em;min-width:7em}
.card b{display:block;font-size:1.8em}
.pass{color:var(--pass)}.fail{color:var(--fail)}.skip,.warn{color:var(--skip)}
table{border-collapse:collapse;width:100%;margin:.4em 0}
th,td{border:1px solid var(--line);padding:.3em .5em;text-align:left;vertical-align:top}
th{background:var(--code)}
pre{background:var(--code);margin:0;padding:.4em;white-space:pre-wrap;word-break:break-all;font-size:.85em;max-height:16em;overflow:auto}
.failure{border-left:4px solid var(--fail);padding:.2em .8em;margin:1em 0}
section[id^="warn-"]{border-left-color:var(--skip)}
.failure h3{margin:.2em 0;font-size:1.05em}
td.none{color:var(--muted)}
</style></head><body>
<h1>Conformance of <code>{{.Target}}</code></h1>
<p class="muted">profile {{.Profile}} · started {{.Started.Format "2006-01-02 15:04:05 UTC"}} · {{seconds .ElapsedMS}} s</p>
<div class="cards" id="summary">
<div class="card"><b class="pass" id="passed">{{count . pass}}</b>passed</div>
<div class="card"><b class="fail" id="failed">{{count . fail}}</b>failed</div>
<div class="card"><b class="skip" id="warned">{{count . warn}}</b>warned{{if .Strict}} (strict: they fail){{end}}</div>
<div class="card"><b class="skip" id="skipped">{{count . skip}}</b>skipped</div>
<div class="card"><b class="muted" id="unsupported">{{count . unsup}}</b>unsupported</div>
<div class="card"><b>{{len .Results}}</b>checks</div>
</div>

<h2>Failures and warnings</h2>
{{range .Results}}{{if or (eq .Status "fail") (eq .Status "warn")}}
<section class="failure" id="{{.Status}}-{{.ID}}">
<h3 class="{{.Status}}">{{if eq .Status "warn"}}WARNING {{end}}{{.ID}} <span class="muted">({{.Area}})</span></h3>
<p><b>Spec:</b> {{.Spec}}<br><span class="muted">sentences: {{sentences .ID}}</span></p>
{{range .Evidence}}<table>
{{if .Request}}<tr><th>request</th><td><pre>{{.Request}}</pre></td></tr>{{end}}
{{if .Status}}<tr><th>status</th><td>{{.Status}}</td></tr>{{end}}
{{if .Response}}<tr><th>response</th><td><pre>{{.Response}}</pre></td></tr>{{end}}
<tr><th>expected</th><td>{{.Expected}}</td></tr>
<tr><th>seen</th><td class="fail">{{.Seen}}</td></tr>
</table>{{end}}
</section>{{end}}{{end}}
{{if eq (count . fail) 0}}<p class="pass">No check failed.</p>{{end}}

<h2>Skipped and unsupported</h2>
<table><tr><th>check</th><th>verdict</th><th>reason</th></tr>
{{range .Results}}{{if or (eq .Status "skip") (eq .Status "unsupported")}}<tr><td>{{.ID}}</td><td>{{.Status}}</td><td>{{.Reason}}</td></tr>{{end}}{{end}}
</table>

<h2>All checks</h2>
<table id="results"><tr><th>check</th><th>area</th><th>verdict</th><th>generated cases</th><th>sentences</th></tr>
{{range .Results}}<tr class="result {{.Status}}"><td>{{.ID}}</td><td>{{.Area}}</td><td class="{{.Status}}">{{.Status}}</td><td>{{if .Cases}}{{.Cases}}{{end}}</td><td class="muted">{{sentences .ID}}</td></tr>
{{end}}</table>

{{with .Coverage}}
<h2>Coverage: operation × documented parameter × statuses seen</h2>
<table id="coverage"><tr><th>operation</th><th>statuses</th><th>parameters (statuses seen when sent; – never sent)</th></tr>
{{range .Operations}}<tr><td><code>{{.Operation}}</code></td><td>{{statuses .Statuses}}</td><td>{{range .Parameters}}<code>{{.Name}}</code> {{if .Statuses}}{{statuses .Statuses}}{{else}}<span class="muted">–</span>{{end}}<br>{{end}}</td></tr>
{{end}}</table>

<h2>Coverage: response fields held to the public API's schema</h2>
<table id="fields"><tr><th>operation</th><th>replies checked</th><th>fields covered</th><th>fields never shown</th></tr>
{{range .Fields}}<tr><td><code>{{.Method}} {{.Path}}</code> {{.Operation}}</td><td>{{.Replies}}</td><td>{{.Covered}}/{{.Total}}</td><td class="muted">{{range .Unchecked}}<code>{{.}}</code> {{end}}</td></tr>
{{end}}</table>

<h2>Spec sentences</h2>
<table id="sentences"><tr><th>sentence</th><th>source</th><th>state</th><th>checks or why</th></tr>
{{range .Sentences}}<tr><td>{{.ID}}</td><td>{{.Source}}</td><td>{{.State}}</td><td>{{if .Why}}{{.Why}}{{else}}{{range .Checks}}{{.}} {{end}}{{end}}</td></tr>
{{end}}</table>
{{end}}
</body></html>
`))
