package conformance

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"
)

// The catalogue's response fields: per operation, how many members of
// its replies (by the public API's schema) a run against the quick start
// showed and held to the contract, measured by TestSuitePassesAgainstModelgate
// (go test ./conformance -run TestSuitePassesAgainstModelgate -update-fields
// rewrites fieldcoverage.json), and why each other one is unchecked.

//go:embed fieldcoverage.json
var measuredFieldsJSON []byte

// MeasuredFields returns the field coverage measured against the quick
// start, in both profiles together.
func MeasuredFields() []FieldCoverage {
	var rows []FieldCoverage
	if err := json.Unmarshal(measuredFieldsJSON, &rows); err != nil {
		panic(fmt.Sprintf("fieldcoverage.json: %v", err)) // embedded: TestFieldCatalogue reads it
	}
	return rows
}

// uncheckedWhy says why the quick start never shows a field, by a
// pattern of operation and field path (path.Match, * one segment of
// either), first match wins.
var uncheckedWhy = []struct{ op, field, why string }{
	{"*", "*audio*", "audio output: the reference engine produces text only (modalities are the model's)"},
	{"*", "*annotations*", "citations come from web or file search tools, whose results the reference engine does not annotate"},
	{"*", "*refusal*", "a refusal is the model's decision; the reference engine never refuses"},
	{"*", "*function_call*", "the deprecated functions interface: the suite sends tools"},
	{"*", "*custom*", "custom (free-form) tools: the suite sends function tools"},
	{"*", "moderation*", "moderation results of a provider's own filter; the reference engine has none"},
	{"*", "*_tokens_details.*", "token details of modalities and caching the reference engine does not count"},
	{"createChatCompletion", "metadata", "chat completions repeat metadata only where the provider stores them; the reference engine does not"},
	{"*", "*last_error*", "set only when a file's ingestion fails; every file the suite attaches ingests"},
	{"*", "*reasoning*", "reasoning output belongs to reasoning models; the reference engine has none"},
	{"*", "*error*", "an error member is set only after a failure a bounded run does not cause on this operation"},
	{"*", "*incomplete_details*", "set only when a limit cut the reply"},
	{"*", "*file_ids[]", "ids of files a tool resource holds: the suite's threads hold none"},
	{"*", "*vector_store_ids[]", "ids of vector stores a tool resource holds: the suite's threads hold none"},
	{"*Conversation*", "*", "item kinds other than messages and function calls (outputs of hosted tools, computer use, MCP) come from tools outside the surface"},
	{"*Response*", "*", "output kinds and configurations of hosted tools (web search, file search, computer use, code interpreter, MCP, image generation), outside the surface"},
	{"*InputItems*", "*", "input item kinds of hosted tools, outside the surface"},
	{"*Batch*", "*", "set only in states a bounded run does not reach for every batch"},
}

// whyUnchecked says why a field of an operation is unchecked.
func whyUnchecked(op, field string) string {
	for _, w := range uncheckedWhy {
		if okOp, _ := path.Match(w.op, op); !okOp {
			continue
		}
		if ok, _ := path.Match(w.field, field); ok {
			return w.why
		}
	}
	return "optional, and no reply of the quick start holds it"
}

// writeFieldCatalogue writes `conformance list`'s response fields.
func writeFieldCatalogue(b *strings.Builder) {
	b.WriteString("\n# response fields held to the public API's schema, measured against the quick start: operation, method path, covered/total, then each unchecked field and why\n")
	for _, r := range MeasuredFields() {
		fmt.Fprintf(b, "%s\t%s %s\t%d/%d\n", r.Operation, r.Method, r.Path, r.Covered, r.Total)
		if r.Replies == 0 {
			b.WriteString("\tnever called with success: the suite's surface does not include it\n")
			continue
		}
		for _, f := range r.Unchecked {
			fmt.Fprintf(b, "\t%s\t%s\n", f, whyUnchecked(r.Operation, f))
		}
	}
}

// writeFamilies writes `conformance list`'s invariant families.
func writeFamilies(b *strings.Builder) {
	b.WriteString("\n# invariant families: name, summary, checks; what no check covers and why\n")
	for _, f := range families {
		fmt.Fprintf(b, "%s\t%s\t%s\n", f.Name, f.Summary, strings.Join(FamilyChecks(f), ","))
		for _, n := range f.NotCovered {
			fmt.Fprintf(b, "\tnot covered: %s\n", n)
		}
	}
}

// WriteFieldCoverageJSON writes rows as fieldcoverage.json holds them:
// a JSON array, one operation a line.
func WriteFieldCoverageJSON(w io.Writer, rows []FieldCoverage) error {
	var b strings.Builder
	b.WriteString("[\n")
	for i, r := range rows {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(line)
		if i < len(rows)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("]\n")
	_, err := io.WriteString(w, b.String())
	return err
}
