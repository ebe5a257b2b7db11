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
	fmt.Fprintf(&b, "conformance of %s (profile %s): %d passed, %d failed, %d skipped in %.1fs\n",
		r.Target, r.Profile, r.Count(Pass), r.Count(Fail), r.Count(Skip), float64(r.ElapsedMS)/1000)
	rank := map[Status]int{Fail: 0, Skip: 1, Pass: 2}
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
		slices.SortStableFunc(results, func(a, b Result) int { return rank[a.Status] - rank[b.Status] })
		fmt.Fprintf(&b, "\n== %s\n", area)
		for _, res := range results {
			fmt.Fprintf(&b, "  %-4s  %s\n", strings.ToUpper(string(res.Status)), res.ID)
			switch res.Status {
			case Skip:
				fmt.Fprintf(&b, "        reason: %s\n", res.Reason)
			case Fail:
				fmt.Fprintf(&b, "        spec: %s\n", res.Spec)
				for _, ev := range res.Evidence {
					writeEvidence(&b, ev)
				}
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
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
				var b strings.Builder
				for _, ev := range res.Evidence {
					writeEvidence(&b, ev)
				}
				c.Failure = &junitMessage{Message: res.Spec, Text: b.String()}
				s.Failures++
			case Skip:
				c.Skipped = &junitMessage{Message: res.Reason}
				s.Skipped++
			}
			s.Cases = append(s.Cases, c)
			s.Tests++
		}
		if s.Tests > 0 {
			out.Suites = append(out.Suites, s)
		}
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
