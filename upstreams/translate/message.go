package translate

import "fmt"

// RefuseExtras is the 400 naming the first field of message m (param
// names it, messages[i]) that a translating provider (kind) has no
// counterpart for: a participant name, an assistant's audio or deprecated
// function_call, or an image part's detail other than auto. The other
// fields of a message are translated (content parts by type, an
// assistant's refusal as text, tool calls and tool results).
func (m *Message) RefuseExtras(kind, param string) error {
	switch {
	case m.Name != "":
		return Unsupported(kind, param+".name", "Message names cannot be sent to %s: it has no participant names; leave name out or put it in the content.", kind)
	case m.MessageExtras == nil:
	case !isDefault(m.Audio, noValue):
		return Unsupported(kind, param+".audio", "An assistant's earlier audio cannot be sent to %s: it has no audio output.", kind)
	case !isDefault(m.FunctionCall, noValue):
		return Unsupported(kind, param+".function_call", "The deprecated function_call cannot be sent to %s: use tool_calls.", kind)
	}
	for j := range m.Content {
		if img := m.Content[j].ImageURL; img != nil && img.Detail != "" && img.Detail != "auto" {
			return Unsupported(kind, fmt.Sprintf("%s.content[%d].image_url.detail", param, j), "An image's detail %q cannot be sent to %s: it chooses the resolution itself (send auto or leave detail out).", img.Detail, kind)
		}
	}
	return nil
}
