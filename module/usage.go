package modelgate

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/modelgate/modelgate/internal/jsonlex"
	"github.com/modelgate/modelgate/upstreams"
)

// usage is a reply's token usage, as the exchange reads it: from a
// stream's chunks or from a JSON reply, its bytes or its decoded document.
type usage struct {
	prompt, completion, total int64
	// cached and reasoning are the parts of prompt and completion its
	// details report (cached_tokens, reasoning_tokens); hasTotal: it
	// reports total_tokens.
	cached, reasoning int64
	hasTotal          bool
}

// chunkUsage reads the usage of a stream chunk, and whether the chunk is
// the usage-only one (no choices) that include_usage adds at the end.
func chunkUsage(data []byte) (*usage, bool) {
	if len(data) == 0 || data[0] != '{' {
		return nil, false
	}
	// Most chunks have no usage at all, or null, and need not be parsed
	// for it, unless a \u escape could spell its name.
	escapes := bytes.Contains(data, []byte(`\u`))
	if i := bytes.Index(data, []byte("usage")); !escapes && (i < 0 || nullUsage(data, i)) {
		return nil, false
	}
	u := gjson.GetBytes(data, "usage")
	if !u.IsObject() {
		// A Responses stream carries it in its last event's response.
		if !escapes && !bytes.Contains(data, []byte("response")) {
			return nil, false
		}
		if u = gjson.GetBytes(data, "response.usage"); !u.IsObject() {
			return nil, false
		}
	}
	choices := gjson.GetBytes(data, "choices")
	return readUsage(u), choices.IsArray() && len(choices.Array()) == 0
}

// nullUsage reports whether JSON data without \u escapes, whose first
// "usage" is at i, surely has no usage object, as the chunks of a stream
// with include_usage mostly do (`"usage":null`): that "usage" is the only
// one, followed by `"`, a colon and null. A member that gjson reads as
// "usage", anywhere, is named by the letters themselves (no other escape
// spells a letter, and a name gjson cuts short at a bad escape keeps its
// first letters), so it is that one, whose name ends there and whose value
// is null.
func nullUsage(data []byte, i int) bool {
	if bytes.Contains(data[i+1:], []byte("usage")) {
		return false
	}
	rest := data[i+len("usage"):]
	if len(rest) == 0 || rest[0] != '"' {
		return false
	}
	j := jsonlex.SkipSpace(rest, 1)
	if j == len(rest) || rest[j] != ':' {
		return false
	}
	return bytes.HasPrefix(rest[jsonlex.SkipSpace(rest, j+1):], []byte("null"))
}

// readUsage reads a usage object in one pass, each count from the first
// member of its name as gjson's Get would find it.
func readUsage(u gjson.Result) *usage {
	var counts [len(usageNames)]int64
	var seen [len(usageNames)]bool
	u.ForEach(func(name, value gjson.Result) bool {
		i := slices.Index(usageNames[:], name.Str)
		if i >= 0 && !seen[i] {
			counts[i], seen[i] = value.Int(), true
			if detail := usageDetails[i]; detail != "" {
				counts[i] = value.Get(detail).Int()
			}
		}
		return true
	})
	return usageOf(counts, seen[4])
}

// docUsage is readUsage of a decoded reply's usage: what readUsage reads of
// the reply's bytes when no object in it names a member twice (as
// schemas.CheckResponse's document), each count converted by gjson.
func docUsage(doc map[string]any) *usage {
	u, ok := doc["usage"].(map[string]any)
	if !ok {
		return nil
	}
	var counts [len(usageNames)]int64
	for i, name := range usageNames {
		v := u[name]
		if detail := usageDetails[i]; detail != "" {
			details, _ := v.(map[string]any)
			v = details[detail]
		}
		counts[i] = docCount(v)
	}
	_, hasTotal := u["total_tokens"]
	return usageOf(counts, hasTotal)
}

// docCount is gjson's Int of a decoded value.
func docCount(v any) int64 {
	switch v := v.(type) {
	case json.Number:
		return numberCount(v)
	case string:
		return gjson.Result{Type: gjson.String, Str: v}.Int()
	case bool:
		if v {
			return 1
		}
	}
	return 0
}

// numberCount is gjson's Int of a JSON number: an integer below 10^15 in
// magnitude, which gjson reads as a float64 exactly and converts back, is
// parsed as such; any other number is converted by gjson.
func numberCount(n json.Number) int64 {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil && -1e15 < i && i < 1e15 {
		return i
	}
	return gjson.Parse(string(n)).Int()
}

// usageOf sums counts read by the names of usageNames: chat and embeddings
// count prompt and completion tokens, Responses input and output tokens.
func usageOf(counts [len(usageNames)]int64, hasTotal bool) *usage {
	return &usage{
		prompt:     upstreams.SumTokens(counts[0], counts[1]),
		completion: upstreams.SumTokens(counts[2], counts[3]),
		total:      counts[4],
		cached:     counts[5] + counts[6],
		reasoning:  counts[7] + counts[8],
		hasTotal:   hasTotal,
	}
}

// usageNames are the members readUsage reads; of those that are objects
// it reads the member usageDetails names.
var usageNames = [...]string{"prompt_tokens", "input_tokens", "completion_tokens", "output_tokens", "total_tokens",
	"prompt_tokens_details", "input_tokens_details", "completion_tokens_details", "output_tokens_details"}

var usageDetails = [len(usageNames)]string{5: "cached_tokens", 6: "cached_tokens", 7: "reasoning_tokens", 8: "reasoning_tokens"}

// doesWork reports whether a reply of op reports the usage of work it did,
// which is charged to its key: a chat, a completion, embeddings, a
// response made, images, audio, moderations. Others (a batch, a stored
// response or a vector store retrieved or listed) may carry a usage of
// work already charged when it was done, which is not charged again. An
// unknown path passed through does work unless it only reads (GET, HEAD).
func doesWork(op *Operation, method string) bool {
	switch op.ID {
	case upstreams.OpChatCompletionsCreate, upstreams.OpCompletionsCreate, upstreams.OpEmbeddingsCreate,
		upstreams.OpResponsesCreate, upstreams.OpModerationsCreate, upstreams.OpImagesGenerate, upstreams.OpImagesEdit,
		upstreams.OpAudioSpeech, upstreams.OpAudioTranscriptions, upstreams.OpAudioTranslations:
		return true
	case upstreams.OpUnknown:
		return method != http.MethodGet && method != http.MethodHead
	}
	return false
}
