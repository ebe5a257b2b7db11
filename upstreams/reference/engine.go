package reference

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/tokens"
)

// Version changes whenever the engine's output for a request changes; the
// system fingerprint is derived from it.
const Version = "reference-2"

var fingerprint = func() string {
	sum := sha256.Sum256([]byte(Version))
	return fmt.Sprintf("fp_%x", sum[:5])
}()

// vocabulary the text is drawn from: plain words, each a token or two.
var vocabulary = strings.Fields(`the a reference reply answers your request with words chosen
deterministically from this list so that tests can rely on them gateway model token stream
choice message tool result value field schema number string object array true false data
seed sample order time place river mountain city light sound color table chair window door
garden paper letter bridge market station north south east west small large quick slow`)

// rng is splitmix64: tiny, fast and identical on every platform.
type rng struct{ state uint64 }

func (r *rng) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *rng) intn(n int) int {
	if n <= 0 {
		return 0
	}
	return int(r.next() % uint64(n))
}

// choiceOut is one generated choice.
type choiceOut struct {
	content      []int // token IDs of the content; nil for tool calls
	text         string
	toolCalls    []toolCallOut
	finishReason string
	logprobs     []tokenLogprob
}

type toolCallOut struct {
	id, name, arguments string
}

type tokenLogprob struct {
	Token       string       `json:"token"`
	Logprob     float64      `json:"logprob"`
	Bytes       []int        `json:"bytes"`
	TopLogprobs []altLogprob `json:"top_logprobs"`
}

type altLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

// reply is a whole generated answer, rendered as JSON or as a stream.
type reply struct {
	id, model        string
	created          int64
	choices          []choiceOut
	promptTokens     int
	completionTokens int
	serviceTier      string
}

// generate builds the reply for a request.
func generate(req *request) (*reply, *upstreams.Error) {
	n := 1
	if req.N != nil {
		n = *req.N
	}
	if n < 1 || n > 128 {
		return nil, upstreams.InvalidRequest("n", "n must be between 1 and 128")
	}
	if err := checkSchemas(req); err != nil {
		return nil, err
	}
	req.budget = newBudget()
	enc := tokens.ForModel(req.Model)
	base := requestHash(req)
	r := &reply{
		// Ids must differ between calls, content must not: ids take the time.
		id:           fmt.Sprintf("chatcmpl-%x%x", base[:6], uint64(time.Now().UnixNano())&0xffffffffffff),
		model:        req.Model,
		created:      time.Now().Unix(),
		promptTokens: tokens.CountChat(req.Model, req.raw),
		serviceTier:  "default",
	}
	if req.ServiceTier != "" && req.ServiceTier != "auto" {
		r.serviceTier = req.ServiceTier
	}
	calls, err := toolsToCall(req)
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		rnd := &rng{state: binary.LittleEndian.Uint64(base[:8]) + uint64(i)*0x51ed27}
		var c choiceOut
		if len(calls) > 0 {
			c = toolChoice(req, calls, rnd, i)
			for _, tc := range c.toolCalls {
				r.completionTokens += enc.Count(tc.name) + enc.Count(tc.arguments)
			}
		} else {
			c = textChoice(req, enc, rnd)
			r.completionTokens += len(c.content)
		}
		if req.holdsChoice(&c) && req.Logprobs && len(c.toolCalls) == 0 {
			c.logprobs = logprobsFor(c.content, enc, req.TopLogprobs, rnd, req.budget, req.logprobsParam())
		}
		if err := req.overBudget(); err != nil {
			return nil, err
		}
		r.choices = append(r.choices, c)
	}
	return r, nil
}

// requestHash digests everything that decides the reply's content.
func requestHash(req *request) [32]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", Version, req.Model)
	for _, m := range req.Messages {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", m.Role, m.Name, m.ToolCallID)
		writeCanonical(h, m.Content)
		h.Write([]byte{0})
	}
	for _, opt := range []*float64{req.Temperature, req.TopP} {
		if opt != nil {
			fmt.Fprintf(h, "%g\x00", *opt)
		} else {
			h.Write([]byte("-\x00"))
		}
	}
	if req.Seed != nil {
		fmt.Fprintf(h, "seed=%d", *req.Seed)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// writeCanonical writes v as JSON in one form (keys sorted, no HTML
// escaping), so a reply depends on a message's content, not on how the
// client's JSON spelled it.
func writeCanonical(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// completionCap is the requested token cap, if any.
func completionCap(req *request) (limit int, capped bool) {
	switch {
	case req.MaxCompletionTokens != nil:
		return *req.MaxCompletionTokens, true
	case req.MaxTokens != nil:
		return *req.MaxTokens, true
	}
	return 0, false
}

// textChoice generates a text (or JSON) answer as tokens.
func textChoice(req *request, enc *tokens.Encoding, rnd *rng) choiceOut {
	text := draftText(req, enc, rnd)
	c := choiceOut{finishReason: "stop"}
	if req.budget.exceeded {
		return c // refused: not worth tokenizing
	}
	ids := enc.Encode(text)
	ids = applyLogitBias(ids, req.LogitBias, enc)
	if limit, capped := completionCap(req); capped && len(ids) > limit {
		ids = ids[:limit]
		c.finishReason = "length"
	}
	text = enc.Decode(ids)
	if cut, ok := cutAtStop(text, req.Stop); ok {
		text = cut
		ids = enc.Encode(text)
		c.finishReason = "stop"
	}
	c.content, c.text = ids, text
	return c
}

// draftText is the reply before caps and stop sequences.
func draftText(req *request, enc *tokens.Encoding, rnd *rng) string {
	words := wordsFor(req, rnd, 12+rnd.intn(12))
	var text string
	last := req.Messages[len(req.Messages)-1]
	switch {
	case last.Role == "tool":
		var results []string
		for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == "tool"; i-- {
			results = append([]string{req.Messages[i].text()}, results...)
		}
		text = "The tool results were: " + strings.Join(results, "; ") + ". " + strings.Join(words, " ") + "."
	default:
		quote := strings.Fields(lastUserText(req))
		text = "Reference reply to \"" + strings.Join(quote[:min(len(quote), 8)], " ") + "\": " + strings.Join(words, " ") + "."
	}
	if bias := boostedTokens(req.LogitBias); len(bias) > 0 {
		text = enc.Decode(bias) + text
	}
	if req.ResponseFormat != nil {
		switch req.ResponseFormat.Type {
		case "json_object":
			b, _ := json.Marshal(map[string]string{"reply": text})
			return string(b)
		case "json_schema":
			if req.ResponseFormat.JSONSchema != nil {
				schema := req.ResponseFormat.JSONSchema.Schema
				g := req.generator("response_format", schema, rnd, words)
				b, _ := json.Marshal(g.value(schema))
				return string(b)
			}
		}
	}
	return text
}

// wordsFor draws n words; the penalties change how.
func wordsFor(req *request, rnd *rng, n int) []string {
	temperature, topP := 1.0, 1.0
	if req.Temperature != nil {
		temperature = *req.Temperature
	}
	if req.TopP != nil {
		topP = *req.TopP
	}
	// A low top_p or temperature narrows the words drawn from, the way
	// sampling narrows to the likeliest tokens.
	pool := vocabulary[:max(4, int(math.Ceil(float64(len(vocabulary))*min(topP, 1)*min(max(temperature, 0.05), 1))))]
	used := map[string]bool{}
	out := make([]string, 0, n)
	for len(out) < n {
		w := pool[rnd.intn(len(pool))]
		if req.PresencePenalty > 0 && used[w] && len(used) < len(pool) {
			continue
		}
		if req.FrequencyPenalty < 0 && len(out)%2 == 1 {
			w = out[len(out)-1]
		}
		used[w] = true
		out = append(out, w)
	}
	return out
}

func lastUserText(req *request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return req.Messages[i].text()
		}
	}
	return ""
}

// boostedTokens are logit_bias entries of +50 or more, by token ID.
func boostedTokens(bias map[string]float64) []int {
	var ids []int
	for k, v := range bias {
		if id, err := strconv.Atoi(k); err == nil && v >= 50 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// applyLogitBias removes tokens biased by -50 or less.
func applyLogitBias(ids []int, bias map[string]float64, enc *tokens.Encoding) []int {
	if len(bias) == 0 {
		return ids
	}
	out := ids[:0:0]
	for _, id := range ids {
		if v, ok := bias[strconv.Itoa(id)]; ok && v <= -50 {
			continue
		}
		out = append(out, id)
	}
	return out
}

// cutAtStop ends text before the first stop sequence it contains.
func cutAtStop(text string, stops []string) (string, bool) {
	at := -1
	for _, s := range stops {
		if s == "" {
			continue
		}
		if i := strings.Index(text, s); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at < 0 {
		return text, false
	}
	return text[:at], true
}

// logprobsFor gives each token a deterministic log probability and
// top alternatives in descending order, the chosen token first, each
// entry held by the budget: it stops, the budget exceeded because of
// param, at the first entry not left.
func logprobsFor(ids []int, enc *tokens.Encoding, top int, rnd *rng, b *budget, param string) []tokenLogprob {
	out := make([]tokenLogprob, 0, len(ids))
	for _, id := range ids {
		tok := enc.Decode([]int{id})
		if !b.holds(logprobBytes(tok), param) {
			return nil
		}
		lp := -float64(rnd.intn(2000)) / 1000
		entry := tokenLogprob{Token: tok, Logprob: lp, Bytes: byteInts(tok), TopLogprobs: []altLogprob{}}
		if top > 0 {
			if !b.holds(logprobBytes(tok), param) {
				return nil
			}
			entry.TopLogprobs = append(entry.TopLogprobs, altLogprob{Token: tok, Logprob: lp, Bytes: byteInts(tok)})
			next := lp
			for k := 1; k < top; k++ {
				next -= 0.25 + float64(rnd.intn(1000))/1000
				alt := vocabulary[(id+k*7)%len(vocabulary)]
				if alt == tok {
					alt = alt + "s"
				}
				if !b.holds(logprobBytes(alt), param) {
					return nil
				}
				entry.TopLogprobs = append(entry.TopLogprobs, altLogprob{Token: alt, Logprob: next, Bytes: byteInts(alt)})
			}
		}
		out = append(out, entry)
	}
	return out
}

func byteInts(s string) []int {
	out := make([]int, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = int(s[i])
	}
	return out
}
