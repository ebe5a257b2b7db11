package conformance

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteText writes the report for people: a summary line, then each area
// with its failures first (with their evidence), then skips, then passes.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "conformance of %s (profile %s): %s in %.1fs\n", r.Target, r.Profile, r.summary(), float64(r.ElapsedMS)/1000)
	for _, area := range AllAreas {
		var results []Result
		for _, res := range r.Results {
			if res.Area == area {
				results = append(results, res)
			}
		}
		if len(results) == 0 {
			continue
		}
		slices.SortStableFunc(results, func(a, b Result) int { return verdictRank[a.Status] - verdictRank[b.Status] })
		fmt.Fprintf(&b, "\n== %s\n", area)
		for _, res := range results {
			fmt.Fprintf(&b, "  %-5s %s\n", verdictLabel(res.Status), res.ID)
			switch res.Status {
			case Skip, Unsupported:
				fmt.Fprintf(&b, "        reason: %s\n", res.Reason)
			case Fail, Warn:
				fmt.Fprintf(&b, "        spec: %s\n", res.Spec)
				b.WriteString(evidenceText(res.Evidence))
			}
		}
	}
	if r.Coverage != nil {
		r.Coverage.writeText(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeText writes the coverage matrix and the sentences' state.
func (c *Coverage) writeText(b *strings.Builder) {
	b.WriteString("\n== coverage: operation, statuses seen; each documented parameter with the statuses seen when sent (- never sent)\n")
	for _, o := range c.Operations {
		fmt.Fprintf(b, "  %-30s %s\n", o.Operation, statusList(o.Statuses))
		for _, p := range o.Parameters {
			fmt.Fprintf(b, "      %-26s %s\n", p.Name, statusList(p.Statuses))
		}
	}
	writeFieldText(b, c.Fields)
	counts := map[string]int{}
	for _, s := range c.Sentences {
		counts[s.State]++
	}
	fmt.Fprintf(b, "\n== spec sentences: %d exercised, %d not exercised, %d not observable\n", counts[exercised], counts[notExercised], counts[notObservable])
	for _, s := range c.Sentences {
		switch s.State {
		case notExercised:
			fmt.Fprintf(b, "  NOT EXERCISED  %s (%s)\n", s.ID, s.Source)
		case notObservable:
			fmt.Fprintf(b, "  NOT OBSERVABLE %s (%s): %s\n", s.ID, s.Source, s.Why)
		}
	}
}

// statusList writes statuses, "-" for none.
func statusList(ss []int) string {
	if len(ss) == 0 {
		return "-"
	}
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = fmt.Sprint(s)
	}
	return strings.Join(parts, " ")
}

// evidenceText writes a result's evidence as the text report does.
func evidenceText(evs []Evidence) string {
	var b strings.Builder
	for _, ev := range evs {
		writeEvidence(&b, ev)
	}
	return b.String()
}

func writeEvidence(b *strings.Builder, ev Evidence) {
	if ev.Request != "" {
		fmt.Fprintf(b, "        request:  %s\n", ev.Request)
	}
	if ev.Status != 0 {
		fmt.Fprintf(b, "        status:   %d\n", ev.Status)
	}
	if ev.Response != "" {
		fmt.Fprintf(b, "        response: %s\n", ev.Response)
	}
	fmt.Fprintf(b, "        expected: %s\n        seen:     %s\n", ev.Expected, ev.Seen)
}

// WriteJSON writes the report as one JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure"`
	Skipped   *junitMessage `xml:"skipped"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML, one test suite per area.
func (r *Report) WriteJUnit(w io.Writer) error {
	var out junitSuites
	for _, area := range AllAreas {
		s := junitSuite{Name: "conformance." + area}
		for _, res := range r.Results {
			if res.Area != area {
				continue
			}
			c := junitCase{Name: res.ID, Classname: "conformance." + area}
			switch res.Status {
			case Fail:
				c.Failure = &junitMessage{Message: res.Spec, Text: evidenceText(res.Evidence)}
				s.Failures++
			case Warn:
				if r.Strict {
					c.Failure = &junitMessage{Message: "warning (strict): " + res.Spec, Text: evidenceText(res.Evidence)}
					s.Failures++
				} else {
					c.SystemOut = "WARNING: " + res.Spec + "\n" + evidenceText(res.Evidence)
				}
			case Skip:
				c.Skipped = &junitMessage{Message: res.Reason}
				s.Skipped++
			case Unsupported:
				c.Skipped = &junitMessage{Message: "unsupported: " + res.Reason}
				s.Skipped++
			}
			s.Cases = append(s.Cases, c)
			s.Tests++
		}
		if s.Tests > 0 {
			out.Suites = append(out.Suites, s)
		}
	}
	if r.Coverage != nil {
		out.Suites = append(out.Suites, r.Coverage.junit()...)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("encoding JUnit XML: %w", err)
	}
	return nil
}

// junit writes the coverage as two suites: one case per operation (the
// statuses in its output) and one per sentence, skipped when it was not
// exercised or cannot be observed.
func (c *Coverage) junit() []junitSuite {
	ops := junitSuite{Name: "conformance.coverage.operations"}
	for _, o := range c.Operations {
		var b strings.Builder
		fmt.Fprintf(&b, "statuses: %s\n", statusList(o.Statuses))
		for _, p := range o.Parameters {
			fmt.Fprintf(&b, "%s: %s\n", p.Name, statusList(p.Statuses))
		}
		tc := junitCase{Name: o.Operation, Classname: ops.Name, SystemOut: b.String()}
		if len(o.Statuses) == 0 {
			tc.Skipped = &junitMessage{Message: "not exercised"}
			ops.Skipped++
		}
		ops.Cases = append(ops.Cases, tc)
		ops.Tests++
	}
	sents := junitSuite{Name: "conformance.coverage.sentences"}
	for _, s := range c.Sentences {
		tc := junitCase{Name: s.ID, Classname: sents.Name, SystemOut: strings.Join(s.Checks, "\n")}
		switch s.State {
		case notExercised:
			tc.Skipped = &junitMessage{Message: "not exercised"}
			sents.Skipped++
		case notObservable:
			tc.Skipped = &junitMessage{Message: "not observable: " + s.Why}
			sents.Skipped++
		}
		sents.Cases = append(sents.Cases, tc)
		sents.Tests++
	}
	return []junitSuite{ops, sents}
}
