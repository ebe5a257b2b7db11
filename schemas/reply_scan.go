package schemas

import "github.com/modelgate/modelgate/internal/jsonlex"

// ScanResponse is the fast path of a reply to operation read from its
// bytes in one pass, building no document, for the replies it knows (a
// chat completion's): ok reports that body surely decodes, as
// CheckResponse decodes it, to a reply that conforms (CheckResponse finds
// nothing in it), usage is the bytes of its usage object, nil when it has
// none, and model the bytes of its model, a JSON string with its quotes;
// no object in it names a member twice. Anything it does not
// know (another operation, an escaped member name or value it compares,
// tool calls, a member named twice, deep nesting, an object of many
// members) answers false, and CheckResponse decides.
// reply_scan_test.go checks it against CheckResponse's fast path.
func ScanResponse(operation string, body []byte) (usage, model []byte, ok bool) {
	if operation != "chat.completions.create" {
		return nil, nil, false
	}
	return scanCompletion(body)
}

// scanCompletion is chatCompletionConforms read from the bytes.
func scanCompletion(data []byte) (usage, modelName []byte, ok bool) {
	s := scanner{data: data}
	const (
		id = 1 << iota
		object
		created
		model
		fingerprint
		usageMember
		choices
		required = id | object | created | model | choices
	)
	seen, ok := s.object(1, func(name []byte) (int, bool) {
		switch string(name) {
		case "id":
			return id, s.string()
		case "object":
			v, ok := s.quoted()
			return object, ok && string(v) == "chat.completion"
		case "created":
			return created, s.integer() != nil
		case "model":
			s.i = jsonlex.SkipSpace(s.data, s.i)
			start := s.i
			ok := s.string()
			modelName = s.data[start:s.i]
			return model, ok
		case "system_fingerprint":
			return fingerprint, s.null() || s.string()
		case "usage":
			s.i = jsonlex.SkipSpace(s.data, s.i)
			start := s.i
			ok := s.usageObject()
			usage = s.data[start:s.i]
			return usageMember, ok
		case "choices":
			more, ok := s.open('[', ']')
			for ok && more {
				if !s.completionChoice() {
					return choices, false
				}
				more, ok = s.sep(']')
			}
			return choices, ok
		}
		return 0, true
	})
	if !ok || seen&required != required || jsonlex.SkipSpace(data, s.i) != len(data) {
		return nil, nil, false
	}
	return usage, modelName, true
}

// completionChoice reads a choice of a chat completion (choice).
func (s *scanner) completionChoice() bool {
	const (
		index = 1 << iota
		message
		finish
		logprobs
		required = index | message | finish
	)
	seen, ok := s.object(3, func(name []byte) (int, bool) {
		switch string(name) {
		case "index":
			_, ok := s.nonNegative()
			return index, ok
		case "message":
			return message, s.message()
		case "finish_reason":
			finished, ok := s.finishReason()
			return finish, ok && finished // not null
		case "logprobs":
			return logprobs, s.null()
		}
		return 0, true
	})
	return ok && seen&required == required
}

// message reads a choice's message: the assistant's, its content null or
// a string, its refusal too when it has one.
func (s *scanner) message() bool {
	const (
		role = 1 << iota
		content
		refusal
		toolCalls
		required = role | content
	)
	seen, ok := s.object(4, func(name []byte) (int, bool) {
		switch string(name) {
		case "role":
			v, ok := s.quoted()
			return role, ok && string(v) == "assistant"
		case "content":
			return content, s.null() || s.string()
		case "refusal":
			return refusal, s.null() || s.string()
		case "tool_calls":
			return toolCalls, false // left to the decoding path, which checks each call
		}
		return 0, true
	})
	return ok && seen&required == required
}
