package modelgate

import "html/template"

// dashboardPage is the dashboard's one HTML page: server-rendered, no
// script, no resource from elsewhere (its CSP allows none), light and dark
// by prefers-color-scheme, refreshed every 10 seconds by the browser.
var dashboardPage = template.Must(template.New("dashboard").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<meta http-equiv="refresh" content="10">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
<title>modelgate dashboard</title>
<style>
:root{--bg:#fff;--fg:#1b1f24;--muted:#5b636e;--line:#d5d9de;--accent:#2563eb;--bad:#b42318;--warn:#a15c00;--head:#f3f5f7}
@media (prefers-color-scheme: dark){:root{--bg:#111418;--fg:#e6e8eb;--muted:#9aa3ad;--line:#2c333b;--accent:#6ea8ff;--bad:#ff7b72;--warn:#e3b341;--head:#1a1f25}}
body{background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:78em;padding:0 1em}
h1{font-size:1.4em;margin:0} h2{font-size:1.1em;margin:1.6em 0 .5em} .muted,figcaption{color:var(--muted)}
table{border-collapse:collapse;width:100%} th,td{border-bottom:1px solid var(--line);padding:.3em .5em;text-align:left;vertical-align:top}
th{background:var(--head);font-weight:600} td.n{text-align:right;font-variant-numeric:tabular-nums}
.bad{color:var(--bad)} .warn{color:var(--warn)} code{font-size:.95em}
.plots{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(22em,100%),1fr));gap:1em} figure{margin:0}
svg.plot{width:100%;height:auto;border:1px solid var(--line)} .axis{stroke:var(--muted)} .grid{stroke:var(--line);stroke-dasharray:3 3}
svg.plot text{fill:var(--muted);font-size:11px;font-variant-numeric:tabular-nums}
.line{fill:none;stroke:var(--accent);stroke-width:2} .line.batch{stroke:var(--warn);stroke-dasharray:5 3} .area{fill:var(--accent);opacity:.15}
.key::before{content:"";display:inline-block;width:1.2em;height:0;border-top:2px solid var(--accent);margin:0 .3em .25em .6em} .key.batch::before{border-top:2px dashed var(--warn)}
ul.findings{margin:0;padding-left:1.2em}
.scroll{overflow-x:auto;max-width:100%} .scroll table{min-width:36em} dl.facts{display:flex;flex-wrap:wrap;gap:.3em 1.5em;margin:.6em 0} dl.facts dt{color:var(--muted)} dl.facts dd{margin:0 0 0 .3em;font-variant-numeric:tabular-nums}
@media (max-width:40em){body{margin:.8em auto;padding:0 .5em} th,td{padding:.25em .35em}}
</style></head><body>
<h1>modelgate dashboard</h1>
<p class="muted">Read-only. Counters since {{.Since.Format "2006-01-02 15:04:05"}} (retries and fallbacks since the process started); rendered {{.Now.Format "15:04:05"}}, refreshed every 10 s. No request or reply bodies are shown.</p>

<dl class="facts" id="facts"><div><dt>Version</dt><dd class="version">{{.Version}}</dd></div><div><dt>Uptime</dt><dd class="uptime">{{.Uptime}}</dd></div><div><dt>Requests in flight</dt><dd class="inflight">{{.InFlight}}</dd></div><div><dt>Open streams</dt><dd class="streams">{{.Streams}}</dd></div></dl>

<div class="plots" id="plots">{{.Throughput}}{{.Latency}}</div>

<h2>Models</h2>
<div class="scroll"><table id="models"><thead><tr><th>Model</th><th>Live requests</th><th>Batch lines</th><th>Errors</th><th>Input tokens</th><th>Output tokens</th><th>Spend (USD)</th></tr></thead><tbody>
{{range .Models}}<tr data-model="{{.Name}}"><td>{{.Name}}</td><td class="n live">{{.Live}}</td><td class="n batch">{{.Batch}}</td><td class="n errors{{if .Errors}} bad{{end}}">{{.Errors}}</td><td class="n input">{{.InputTokens}}</td><td class="n output">{{.OutputTokens}}</td><td class="n spend">{{.Spend}}</td></tr>
{{else}}<tr><td colspan="7" class="muted">No model calls yet.</td></tr>
{{end}}</tbody></table></div></div>

<h2>Keys</h2>
<div class="scroll"><table id="keys"><thead><tr><th>Key</th><th>Requests</th><th>Of them batch lines</th><th>Refusals (429)</th><th>Other errors</th><th>Prompt tokens</th><th>Completion tokens</th><th>Spend (USD)</th><th>Rate-limit headroom</th></tr></thead><tbody>
{{range .Keys}}<tr data-key="{{.Name}}"><td>{{.Name}}</td><td class="n requests">{{.Requests}}</td><td class="n batch">{{.Batch}}</td><td class="n refusals{{if .Refusals}} bad{{end}}">{{.Refusals}}</td><td class="n errors">{{.Errors}}</td><td class="n">{{.PromptTokens}}</td><td class="n">{{.CompletionTokens}}</td><td class="n spend">{{.Spend}}{{if .Unpriced}} <span class="muted">+ {{.Unpriced}} unpriced</span>{{end}}</td><td class="headroom">{{if .Limited}}{{.Headroom}}{{else}}<span class="muted">no limits</span>{{end}}</td></tr>
{{end}}</tbody></table></div>

{{if .SpendOn}}<h2>Spend this month (UTC, every instance)</h2>
<div class="scroll"><table id="spend"><thead><tr><th>Key</th><th>Owner</th><th>Model</th><th>Upstream</th><th>Requests</th><th>Spend (USD)</th></tr></thead><tbody>
{{range .Spend}}<tr data-key="{{.KeyName}}"><td>{{.KeyName}}</td><td>{{.Owner}}</td><td>{{.Model}}</td><td>{{.Upstream}}</td><td class="n">{{.Requests}}</td><td class="n spend">{{.CostUSD}}{{if .Unpriced}} <span class="muted">+ {{.Unpriced}} unpriced</span>{{end}}</td></tr>
{{end}}</tbody></table></div>
{{with .SpendError}}<p class="bad">Could not read the spend: {{.}}</p>{{end}}
{{end}}
<h2>Upstreams</h2>
<div class="scroll"><table id="upstreams"><thead><tr><th>Upstream</th><th>Requests</th><th>Errors (5xx)</th><th>Latency p50 / p99</th><th>First byte p50 / p99</th><th>Retries</th><th>Fallbacks</th><th>Reply-check findings</th></tr></thead><tbody>
{{range .Upstreams}}<tr data-upstream="{{.Name}}"><td>{{.Name}}</td><td class="n requests">{{.Requests}}</td><td class="n errors{{if .Errors}} bad{{end}}">{{.Errors}}</td><td class="n">{{.P50}} / {{.P99}}</td><td class="n">{{.TTFB50}} / {{.TTFB99}}</td><td class="n">{{.Retries}}</td><td class="n">{{.Fallbacks}}</td>
<td class="findings">{{if .Findings}}<ul class="findings">{{range .Findings}}<li><span class="warn kind">{{.Kind}}</span> × <span class="count">{{.Count}}</span>{{range .Latest}}<br><code class="example">{{.At.Format "15:04:05"}} {{.Text}}</code>{{end}}</li>{{end}}</ul>{{else}}<span class="muted">none</span>{{end}}</td></tr>
{{else}}<tr><td colspan="8" class="muted">No requests yet.</td></tr>
{{end}}</tbody></table></div>

<h2>Local stores</h2>
<div class="scroll"><table id="stores"><thead><tr><th>Store</th><th>Size</th></tr></thead><tbody>
{{range .Stores}}<tr data-store="{{.Name}}"><td>{{.Name}}</td><td class="n size{{if .Error}} bad{{end}}" title="{{if .Error}}{{.Error}}{{else}}{{.Bytes}} bytes{{end}}">{{.Size}}</td></tr>
{{else}}<tr><td colspan="2" class="muted">None.</td></tr>
{{end}}</tbody></table></div>

<h2>Batches in progress</h2>
<div class="scroll"><table id="batches"><thead><tr><th>Batch</th><th>Status</th><th>Endpoint</th><th>Key</th><th>Completed</th><th>Failed</th><th>Total</th><th>Rate</th><th>ETA</th><th>Created</th><th>Store</th></tr></thead><tbody>
{{range .Batches}}<tr data-batch="{{.ID}}"><td><code>{{.ID}}</code></td><td class="status">{{.Status}}</td><td>{{.Endpoint}}</td><td>{{.KeyName}}</td><td class="n completed">{{.Completed}}</td><td class="n">{{.Failed}}</td><td class="n total">{{.Total}}</td><td class="n rate">{{.Rate}}</td><td class="n eta">{{.ETA}}</td><td>{{.Created}}</td><td>{{.Store}}</td></tr>
{{else}}<tr><td colspan="11" class="muted">None.</td></tr>
{{end}}</tbody></table></div>

<h2>Ingestions in progress</h2>
<div class="scroll"><table id="ingestions"><thead><tr><th>Vector store</th><th>File</th><th>Name</th><th>Key</th><th>Attached</th><th>Store</th></tr></thead><tbody>
{{range .Ingestions}}<tr><td><code>{{.VectorStoreID}}</code></td><td><code>{{.FileID}}</code></td><td>{{.Filename}}</td><td>{{.KeyName}}</td><td>{{.Created}}</td><td>{{.Store}}</td></tr>
{{else}}<tr><td colspan="6" class="muted">None.</td></tr>
{{end}}</tbody></table></div>
{{with .VectorStores}}<div class="scroll"><table id="vector-stores"><thead><tr><th>Vector store</th><th>Name</th><th>Completed</th><th>In progress</th><th>Failed</th><th>Cancelled</th><th>Total</th><th>Store</th></tr></thead><tbody>
{{range .}}<tr data-vector-store="{{.ID}}"><td><code>{{.ID}}</code></td><td>{{.Name}}</td><td class="n completed">{{.Completed}}</td><td class="n in-progress">{{.InProgress}}</td><td class="n failed{{if .Failed}} bad{{end}}">{{.Failed}}</td><td class="n cancelled">{{.Cancelled}}</td><td class="n total">{{.Total}}</td><td>{{.Store}}</td></tr>
{{end}}</tbody></table></div>{{end}}
{{range .ProgressErrors}}<p class="bad">Could not read the work in progress of {{.}}</p>{{end}}

<h2>Last exchanges</h2>
<div class="scroll"><table id="recent"><thead><tr><th>Time</th><th>Operation</th><th>Key</th><th>Model</th><th>Upstream</th><th>Status</th><th>Latency</th><th>Findings</th></tr></thead><tbody>
{{range .Recent}}<tr><td>{{.At}}</td><td class="operation">{{.Operation}}</td><td>{{.KeyName}}</td><td>{{.Model}}</td><td>{{.Upstream}}</td><td class="n status{{if ge .Status 400}} bad{{end}}">{{.Status}}</td><td class="n">{{.Latency}}</td><td>{{range .Findings}}<div class="warn">{{.}}</div>{{end}}</td></tr>
{{else}}<tr><td colspan="8" class="muted">No requests yet.</td></tr>
{{end}}</tbody></table></div>
</body></html>
`))
