package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// The Responses interface, kept on the local store: a response is made by
// the gateway's chat completions route for the caller (the reference
// engine in the quick start, a provider's chat otherwise), from the
// conversation its previous_response_id chain holds plus its own input;
// with `store` (the default) it is kept for retrieval, deletion, listing
// of its input items and continuation. Its tools, structured output,
// token caps, sampling and model rules are the chat route's own.

// maxResponseChain bounds how many stored responses a previous_response_id
// chain is followed through. What the chain holds in all is bounded too,
// by the gateway's body limit (see conversation).
const maxResponseChain = 1000

// responseRequest is the body of responses.create the local upstream reads.
type responseRequest struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"`
	Instructions       *string         `json:"instructions"`
	Tools              json.RawMessage `json:"tools"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	ParallelToolCalls  *bool           `json:"parallel_tool_calls"`
	Text               json.RawMessage `json:"text"`
	MaxOutputTokens    *int            `json:"max_output_tokens"`
	Temperature        *float64        `json:"temperature"`
	TopP               *float64        `json:"top_p"`
	Metadata           json.RawMessage `json:"metadata"`
	Store              *bool           `json:"store"`
	PreviousResponseID string          `json:"previous_response_id"`
	Conversation       json.RawMessage `json:"conversation"`
	Reasoning          *struct {
		Effort *string `json:"effort"`
	} `json:"reasoning"`
	Stream bool    `json:"stream"`
	User   *string `json:"user"`

	// conversationID is the conversation the response continues, read
	// from Conversation.
	conversationID string
}

// responseObject is the public response object, fields in the public order.
type responseObject struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	CompletedAt        *int64            `json:"completed_at"`
	Error              any               `json:"error"`
	IncompleteDetails  any               `json:"incomplete_details"`
	Instructions       *string           `json:"instructions"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Model              string            `json:"model"`
	Output             []json.RawMessage `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Conversation       *conversationRef  `json:"conversation,omitempty"`
	Reasoning          map[string]any    `json:"reasoning"`
	Store              bool              `json:"store"`
	Temperature        float64           `json:"temperature"`
	Text               json.RawMessage   `json:"text"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	Tools              json.RawMessage   `json:"tools"`
	TopP               float64           `json:"top_p"`
	Truncation         string            `json:"truncation"`
	Usage              *responseUsage    `json:"usage"`
	User               *string           `json:"user"`
	Metadata           json.RawMessage   `json:"metadata"`
}

type responseUsage struct {
	InputTokens         int            `json:"input_tokens"`
	InputTokensDetails  map[string]int `json:"input_tokens_details"`
	OutputTokens        int            `json:"output_tokens"`
	OutputTokensDetails map[string]int `json:"output_tokens_details"`
	TotalTokens         int            `json:"total_tokens"`
}

func (l *Local) createResponse(w http.ResponseWriter, c *upstreams.Call) error {
	release, err := l.largeTurn(c)
	if err != nil {
		return err
	}
	defer release()
	var req responseRequest
	if err := json.Unmarshal(c.Body, &req); err != nil {
		return upstreams.InvalidRequest("", "The request body is not a valid response request: %s.", schemas.DescribeJSONError(err))
	}
	ctx := c.Request.Context()
	items, err := inputItems(req.Input, c.Doc["input"])
	if err != nil {
		return err
	}
	// The items are read: the input, decoded and raw, is held no longer.
	c.DropDoc()
	req.Input = nil
	collectLarge(c) // the input read, before the chat is made and decoded
	d := l.dispatcher
	if d == nil {
		return upstreams.ServerError("The local upstream has no gateway to generate responses through.")
	}
	if err := l.resolveReferences(c, items, d.BodyLimit()); err != nil {
		return err
	}
	history, tooLong, err := l.history(c, &req, d.BodyLimit())
	if err != nil {
		return err
	}
	chat, err := chatRequest(&req, history, items)
	if err != nil {
		return err
	}
	if tooLong != nil && int64(len(chat)) > d.BodyLimit() {
		return tooLong
	}
	if req.Stream {
		return l.streamResponse(w, c, d, &req, chat, items)
	}
	reply, derr := d.Dispatch(ctx, upstreams.OpChatCompletionsCreate, c.Principal, chat)
	if derr != nil {
		return fmt.Errorf("generating a response: %w", derr)
	}
	if reply.Status != http.StatusOK {
		return chatFailure(reply)
	}
	resp, err := buildResponse(&req, reply.Body)
	if err != nil {
		return err
	}
	if err := l.keepResponse(c, &req, resp, items); err != nil {
		return err
	}
	upstreams.WriteJSON(w, http.StatusOK, resp)
	return nil
}

// streamResponse makes the response of a streamed chat completion, sending
// its events as the chat's chunks arrive, and keeps it once complete. A
// chat that fails before its stream starts is the response's failure, as
// for a response not streamed; a stream that fails after ends with an
// error event, and nothing is kept of it.
func (l *Local) streamResponse(w http.ResponseWriter, c *upstreams.Call, d upstreams.Dispatcher, req *responseRequest, chat []byte, items []inputItem) error {
	m := newResponseMaker(req, w)
	reply, err := d.DispatchStream(c.Request.Context(), upstreams.OpChatCompletionsCreate, c.Principal, chat, m)
	if m.events.seq == 0 {
		// No event was sent: the chat did not answer with a stream.
		var cc *chatCompletion
		switch {
		case err != nil:
			err = fmt.Errorf("generating a response: %w", err)
		case reply.Status != http.StatusOK:
			err = chatFailure(reply)
		default:
			// An upstream that does not stream answered whole.
			cc, err = readCompletion(reply.Body)
		}
		if err != nil {
			return err
		}
		if err = m.Start(); err == nil {
			m.completion(cc)
		}
	}
	if err == nil && m.finish == nil {
		err = errChatUnfinished
	}
	if err == nil {
		err = l.keepResponse(c, req, m.complete(), items)
	}
	if err != nil {
		if c.Request.Context().Err() == nil {
			l.logger.Warn("a streamed response failed", zap.String("response", m.resp.ID), zap.Error(err))
		}
		m.fail(err)
		return nil
	}
	m.final()
	return nil
}

// keepResponse appends a response's input and output to its conversation,
// and stores a response made with store true, with its input items.
func (l *Local) keepResponse(c *upstreams.Call, req *responseRequest, resp *responseObject, items []inputItem) error {
	collectLarge(c) // the chat answered, before the items are stored
	if resp.Conversation != nil {
		if err := l.appendToConversation(c, resp.Conversation.ID, items, resp); err != nil {
			return err
		}
	}
	if !resp.Store {
		return nil
	}
	obj, err := json.Marshal(resp)
	if err != nil {
		return fmt.Errorf("encoding response: %w", err)
	}
	stored := make([]store.ResponseItem, len(items))
	for i, it := range items {
		stored[i] = store.ResponseItem{ID: it.id, Item: it.stored()}
	}
	output := make([]store.ResponseItem, len(resp.Output))
	for i, raw := range resp.Output {
		var v struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("reading output item: %w", err)
		}
		output[i] = store.ResponseItem{ID: v.ID, Item: raw}
	}
	return l.store.CreateResponse(c.Request.Context(), &store.StoredResponse{ID: resp.ID, Owner: c.Principal.Owner, CreatedAt: resp.CreatedAt,
		PreviousID: req.PreviousResponseID, Object: obj, Output: output}, stored)
}

// conversation is the items of a stored response's chain, oldest first:
// each response's input items, then its output. Instructions are not
// carried over. A response that is missing, deleted, of another owner or
// created with store false is 404, as the public API answers. A chain
// holding more than limit bytes is refused with a 400 once that much is
// read: the chat made from it could not be sent through the gateway
// anyway, and a long chain of large inputs would otherwise be loaded whole.
func (l *Local) conversation(c *upstreams.Call, id string, limit int64) ([]json.RawMessage, error) {
	ctx := c.Request.Context()
	var chain [][]json.RawMessage
	var size int64
	for next, depth := id, 0; next != "" && depth < maxResponseChain; depth++ {
		r, err := l.store.GetResponse(ctx, c.Principal.Owner, next)
		if errors.Is(err, store.ErrNotFound) {
			if next == id {
				return nil, &upstreams.Error{Status: http.StatusNotFound, Type: upstreams.TypeInvalidRequest, Param: "previous_response_id",
					Code: "previous_response_not_found", Message: fmt.Sprintf("Previous response with id '%s' not found.", id)}
			}
			break // an earlier response of the chain was deleted: the conversation starts after it
		}
		if err != nil {
			return nil, err
		}
		inputs, _, err := l.store.ResponseItems(ctx, c.Principal.Owner, next, store.ListQuery{Limit: math.MaxInt32})
		if err != nil {
			return nil, err
		}
		var obj struct {
			Output []json.RawMessage `json:"output"`
		}
		if err := json.Unmarshal(r.Object, &obj); err != nil {
			return nil, fmt.Errorf("reading stored response %s: %w", next, err)
		}
		link := make([]json.RawMessage, 0, len(inputs)+len(obj.Output))
		for _, in := range inputs {
			link = append(link, in.Item)
			size += int64(len(in.Item))
		}
		for _, out := range obj.Output {
			size += int64(len(out))
		}
		if size > limit {
			return nil, conversationTooLong("previous_response_id", "response '"+id+"'", limit)
		}
		chain = append(chain, append(link, obj.Output...))
		next = r.PreviousID
	}
	var out []json.RawMessage
	for i := len(chain) - 1; i >= 0; i-- {
		out = append(out, chain[i]...)
	}
	return out, nil
}

// conversationTooLong refuses to continue a conversation (of the
// response or conversation named by of, given as param) whose chat would
// be larger than the gateway accepts.
func conversationTooLong(param, of string, limit int64) *upstreams.Error {
	return &upstreams.Error{Status: http.StatusBadRequest, Type: upstreams.TypeInvalidRequest, Param: param, Code: "context_length_exceeded",
		Message: fmt.Sprintf("The conversation of %s holds more than the %d bytes a request may carry; start a new conversation.", of, limit)}
}

func (l *Local) retrieveResponse(w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["response_id"]
	r, err := l.store.GetResponse(c.Request.Context(), c.Principal.Owner, id)
	if err != nil {
		return responseNotFound(err, id)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(append(r.Object, '\n'))
	return err
}

func (l *Local) deleteResponse(w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["response_id"]
	if err := l.store.DeleteResponse(c.Request.Context(), c.Principal.Owner, id); err != nil {
		return responseNotFound(err, id)
	}
	upstreams.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "object": "response", "deleted": true})
	return nil
}

func (l *Local) listResponseItems(w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["response_id"]
	q, err := listQuery(c, 20, 100)
	if err != nil {
		return err
	}
	items, hasMore, err := l.store.ResponseItems(c.Request.Context(), c.Principal.Owner, id, q)
	if err != nil {
		return responseNotFound(err, id)
	}
	writeItemPage(w, items, hasMore)
	return nil
}

func responseNotFound(err error, id string) error {
	if errors.Is(err, store.ErrNotFound) {
		return upstreams.NotFound("Response with id '%s' not found.", id)
	}
	return err
}

// chatFailure passes a failed chat completion on as the response's own
// failure, its param renamed to the Responses field it came from.
func chatFailure(reply *upstreams.Reply) error {
	var env upstreams.Envelope
	if json.Unmarshal(reply.Body, &env) != nil || env.Error.Message == "" {
		return &upstreams.Error{Status: http.StatusBadGateway, Type: upstreams.TypeServer,
			Message: fmt.Sprintf("The chat completions route answered with status %d.", reply.Status)}
	}
	return chatError(reply.Status, env.Error)
}

// chatError is the response's error for the chat's error object: its
// type, code and message, its param named as the Responses field it comes
// from.
func chatError(status int, obj upstreams.EnvelopeError) *upstreams.Error {
	e := &upstreams.Error{Status: status, Type: obj.Type, Message: obj.Message}
	if obj.Param != nil {
		e.Param = responsesParam(*obj.Param)
	}
	if obj.Code != nil {
		e.Code = *obj.Code
	}
	return e
}

// chatParams maps chat request fields to the Responses fields they come from.
var chatParams = []struct{ chat, responses string }{
	{"max_completion_tokens", "max_output_tokens"},
	{"reasoning_effort", "reasoning.effort"},
	{"response_format.json_schema", "text.format"},
	{"response_format", "text.format"},
	{"messages", "input"},
}

func responsesParam(p string) string {
	for _, m := range chatParams {
		if p == m.chat || strings.HasPrefix(p, m.chat+".") || strings.HasPrefix(p, m.chat+"[") {
			return m.responses
		}
	}
	if strings.HasPrefix(p, "tools[") {
		return strings.Replace(p, ".function", "", 1)
	}
	return p
}
