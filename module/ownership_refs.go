package modelgate

import (
	"strconv"

	"github.com/modelgate/modelgate/upstreams"
)

// reference is an object a request body names: its kind, ID and the
// field that holds it.
type reference struct {
	kind, id, param string
}

// references collects the objects a body names.
type references []reference

func (r *references) add(kind string, v any, param string) {
	if id, ok := v.(string); ok {
		*r = append(*r, reference{kind, id, param})
	}
}

func (r *references) addAll(kind string, v any, param string) {
	list, _ := v.([]any)
	for i, id := range list {
		r.add(kind, id, param+"["+strconv.Itoa(i)+"]")
	}
}

// contentFiles adds the files the content parts of items (messages,
// input items, conversation items) name: input_file's file_id, a chat
// file part's file.file_id.
func (r *references) contentFiles(items any, param, contentKey string) {
	list, _ := items.([]any)
	for i, item := range list {
		m, _ := item.(map[string]any)
		parts, _ := m[contentKey].([]any)
		for j, part := range parts {
			p, _ := part.(map[string]any)
			at := param + "[" + strconv.Itoa(i) + "]." + contentKey + "[" + strconv.Itoa(j) + "]"
			r.add(kindFile, p["file_id"], at+".file_id")
			if f, ok := p["file"].(map[string]any); ok {
				r.add(kindFile, f["file_id"], at+".file.file_id")
			}
		}
	}
}

// toolResources adds the files and vector stores a thread's
// tool_resources name.
func (r *references) toolResources(v any) {
	tr, _ := v.(map[string]any)
	if ci, ok := tr["code_interpreter"].(map[string]any); ok {
		r.addAll(kindFile, ci["file_ids"], "tool_resources.code_interpreter.file_ids")
	}
	if fs, ok := tr["file_search"].(map[string]any); ok {
		r.addAll(kindVectorStore, fs["vector_store_ids"], "tool_resources.file_search.vector_store_ids")
	}
}

// bodyReferences are the provider objects a request body names, each to
// be the caller's.
func bodyReferences(op string, doc map[string]any) references {
	var r references
	switch op {
	case upstreams.OpResponsesCreate:
		r.add(kindResponse, doc["previous_response_id"], "previous_response_id")
		if c, ok := doc["conversation"].(map[string]any); ok {
			r.add(kindConversation, c["id"], "conversation.id")
		} else {
			r.add(kindConversation, doc["conversation"], "conversation")
		}
		r.contentFiles(doc["input"], "input", "content")
		tools, _ := doc["tools"].([]any)
		for i, tool := range tools {
			t, _ := tool.(map[string]any)
			at := "tools[" + strconv.Itoa(i) + "]"
			r.addAll(kindVectorStore, t["vector_store_ids"], at+".vector_store_ids")
			if c, ok := t["container"].(map[string]any); ok {
				r.addAll(kindFile, c["file_ids"], at+".container.file_ids")
			}
		}
	case upstreams.OpChatCompletionsCreate:
		r.contentFiles(doc["messages"], "messages", "content")
	case upstreams.OpConversationsCreate, upstreams.OpConversationItemsCreate:
		r.contentFiles(doc["items"], "items", "content")
	case upstreams.OpVectorStoresCreate:
		r.addAll(kindFile, doc["file_ids"], "file_ids")
	case upstreams.OpVectorStoreFilesCreate:
		r.add(kindFile, doc["file_id"], "file_id")
	case upstreams.OpBatchesCreate:
		r.add(kindFile, doc["input_file_id"], "input_file_id")
	case upstreams.OpThreadsCreate, upstreams.OpThreadsUpdate:
		r.toolResources(doc["tool_resources"])
		msgs, _ := doc["messages"].([]any)
		for i, msg := range msgs {
			m, _ := msg.(map[string]any)
			atts, _ := m["attachments"].([]any)
			for j, a := range atts {
				am, _ := a.(map[string]any)
				r.add(kindFile, am["file_id"], "messages["+strconv.Itoa(i)+"].attachments["+strconv.Itoa(j)+"].file_id")
			}
		}
	}
	return r
}
