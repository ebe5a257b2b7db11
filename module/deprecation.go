package modelgate

import (
	"net/http"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/upstreams"
)

// deprecation is what the gateway tells a client about a deprecated
// interface or parameter, as RFC 9745 / RFC 8594 headers.
type deprecation struct {
	feature string
	// finding is the request's finding that it uses the feature (see
	// deprecated), made once rather than for each request that does.
	finding string
	// date is the RFC 9745 structured date (@unix-seconds) since which the
	// feature is deprecated.
	date string
	// sunset is the RFC 8594 HTTP date the feature goes away, if announced.
	sunset string
	// link names the replacement, as a Link header value.
	link string
}

var (
	// The Assistants interface (threads): deprecated 2025-08-26, shut down
	// 2026-08-26 as announced by the public API; replaced by Responses.
	// threadsDeprecations is the list of a threads request, made once.
	threadsDeprecations = []deprecation{deprecated(deprecation{
		feature: "threads",
		date:    "@1756166400",
		sunset:  "Wed, 26 Aug 2026 00:00:00 GMT",
		link:    `</v1/responses>; rel="successor-version"`,
	})}
	// Chat parameters: the spec gives no date, so the date is that of the
	// public API description our sources prove marks them deprecated
	// (2026-08-21). Their replacements are parameters, not resources, so
	// there is no Link.
	parameterDeprecations = []deprecation{
		deprecated(deprecation{feature: "max_tokens", date: "@1787270400"}),
		deprecated(deprecation{feature: "user", date: "@1787270400"}),
	}
)

// deprecated is d with its finding, "deprecated: " and its feature.
func deprecated(d deprecation) deprecation {
	d.finding = "deprecated: " + d.feature
	return d
}

// deprecationsFor lists what a request (its decoded body) uses that is
// deprecated.
func deprecationsFor(op string, doc map[string]any) []deprecation {
	if strings.HasPrefix(op, "threads.") {
		return threadsDeprecations
	}
	if op != upstreams.OpChatCompletionsCreate || doc == nil {
		return nil
	}
	set := 0
	for i, d := range parameterDeprecations {
		if _, ok := doc[d.feature]; ok {
			set |= 1 << i
		}
	}
	return parameterDeprecationSets[set]
}

// parameterDeprecationSets holds at index set the parameterDeprecations
// whose bit is set in set, so that a request's list is made once for all
// requests, not for each (the lists are shared: read only). There are
// 2^len(parameterDeprecations) of them: few while the parameters are.
var parameterDeprecationSets = func() [][]deprecation {
	sets := make([][]deprecation, 1<<len(parameterDeprecations))
	for set := range sets {
		for i, d := range parameterDeprecations {
			if set&(1<<i) != 0 {
				sets[set] = append(sets[set], d)
			}
		}
		sets[set] = slices.Clip(sets[set])
	}
	return sets
}()

// setDeprecationHeaders announces deprecations on the reply. Several
// deprecated features share one Deprecation header: the earliest date.
func setDeprecationHeaders(h http.Header, ds []deprecation) {
	if len(ds) == 0 {
		return
	}
	date := ds[0].date
	for _, d := range ds[1:] {
		if d.date < date { // same length "@" + 10 digits: lexical order is time order
			date = d.date
		}
	}
	h.Set("Deprecation", date)
	for _, d := range ds {
		if d.sunset != "" {
			h.Set("Sunset", d.sunset)
		}
		if d.link != "" {
			h.Add("Link", d.link)
		}
	}
}
