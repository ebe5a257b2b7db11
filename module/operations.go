package modelgate

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/modelgate/modelgate/upstreams"
)

// BetaPolicy says what the gateway does with the assistants beta header on
// an operation.
type BetaPolicy uint8

const (
	// BetaIgnore: the header is neither required nor checked.
	BetaIgnore BetaPolicy = iota
	// BetaRequire: the header must carry assistants=v2, else 400 invalid_beta.
	BetaRequire
)

// BodyKind is what an operation's request body is.
type BodyKind uint8

const (
	// BodyNone: no body is expected; one that is sent is ignored.
	BodyNone BodyKind = iota
	// BodyJSON: an application/json object (may be empty on optional-body operations).
	BodyJSON
	// BodyMultipart: multipart/form-data, streamed to the upstream unread.
	BodyMultipart
	// BodyJSONOrMultipart: either, as the provider accepts both.
	BodyJSONOrMultipart
	// BodyOpaque: whatever the client sends, streamed unread (unknown paths).
	BodyOpaque
)

// Operation is one row of the operation table.
type Operation struct {
	ID     string
	Method string
	// Path is the template below /v1, with {name} segments for path parameters.
	Path string
	Body BodyKind
	// BodyRequired: a JSON operation that must carry a body (chat, search, ...).
	BodyRequired bool
	Beta         BetaPolicy

	segments []string
}

// operationTable lists every operation of the spec plus those the official
// SDKs need to use them. The threads interface and vector store search
// require the beta header; the spec's examples carry none on batches.
var operationTable = []Operation{
	{ID: upstreams.OpChatCompletionsCreate, Method: http.MethodPost, Path: "/chat/completions", Body: BodyJSON, BodyRequired: true},

	{ID: upstreams.OpFilesCreate, Method: http.MethodPost, Path: "/files", Body: BodyMultipart, BodyRequired: true},
	{ID: upstreams.OpFilesList, Method: http.MethodGet, Path: "/files"},
	{ID: upstreams.OpFilesRetrieve, Method: http.MethodGet, Path: "/files/{file_id}"},
	{ID: upstreams.OpFilesDelete, Method: http.MethodDelete, Path: "/files/{file_id}"},
	{ID: upstreams.OpFilesContent, Method: http.MethodGet, Path: "/files/{file_id}/content"},

	{ID: upstreams.OpBatchesCreate, Method: http.MethodPost, Path: "/batches", Body: BodyJSON, BodyRequired: true},
	{ID: upstreams.OpBatchesList, Method: http.MethodGet, Path: "/batches"},
	{ID: upstreams.OpBatchesRetrieve, Method: http.MethodGet, Path: "/batches/{batch_id}"},
	{ID: upstreams.OpBatchesCancel, Method: http.MethodPost, Path: "/batches/{batch_id}/cancel", Body: BodyJSON},

	{ID: upstreams.OpThreadsCreate, Method: http.MethodPost, Path: "/threads", Body: BodyJSON, Beta: BetaRequire},
	{ID: upstreams.OpThreadsRetrieve, Method: http.MethodGet, Path: "/threads/{thread_id}", Beta: BetaRequire},
	{ID: upstreams.OpThreadsUpdate, Method: http.MethodPost, Path: "/threads/{thread_id}", Body: BodyJSON, Beta: BetaRequire},
	{ID: upstreams.OpThreadsDelete, Method: http.MethodDelete, Path: "/threads/{thread_id}", Beta: BetaRequire},

	{ID: upstreams.OpVectorStoresCreate, Method: http.MethodPost, Path: "/vector_stores", Body: BodyJSON},
	{ID: upstreams.OpVectorStoresList, Method: http.MethodGet, Path: "/vector_stores"},
	{ID: upstreams.OpVectorStoresRetrieve, Method: http.MethodGet, Path: "/vector_stores/{vector_store_id}"},
	{ID: upstreams.OpVectorStoresUpdate, Method: http.MethodPost, Path: "/vector_stores/{vector_store_id}", Body: BodyJSON},
	{ID: upstreams.OpVectorStoresDelete, Method: http.MethodDelete, Path: "/vector_stores/{vector_store_id}"},
	{ID: upstreams.OpVectorStoresSearch, Method: http.MethodPost, Path: "/vector_stores/{vector_store_id}/search", Body: BodyJSON, BodyRequired: true, Beta: BetaRequire},

	{ID: upstreams.OpVectorStoreFilesCreate, Method: http.MethodPost, Path: "/vector_stores/{vector_store_id}/files", Body: BodyJSON, BodyRequired: true},
	{ID: upstreams.OpVectorStoreFilesList, Method: http.MethodGet, Path: "/vector_stores/{vector_store_id}/files"},
	{ID: upstreams.OpVectorStoreFilesRetrieve, Method: http.MethodGet, Path: "/vector_stores/{vector_store_id}/files/{file_id}"},
	{ID: upstreams.OpVectorStoreFilesDelete, Method: http.MethodDelete, Path: "/vector_stores/{vector_store_id}/files/{file_id}"},
	{ID: upstreams.OpVectorStoreFilesContent, Method: http.MethodGet, Path: "/vector_stores/{vector_store_id}/files/{file_id}/content"},

	{ID: upstreams.OpModelsList, Method: http.MethodGet, Path: "/models"},
	{ID: upstreams.OpModelsRetrieve, Method: http.MethodGet, Path: "/models/{model}"},

	{ID: upstreams.OpEmbeddingsCreate, Method: http.MethodPost, Path: "/embeddings", Body: BodyJSON, BodyRequired: true},
	{ID: upstreams.OpResponsesCreate, Method: http.MethodPost, Path: "/responses", Body: BodyJSON, BodyRequired: true},
	{ID: upstreams.OpResponsesRetrieve, Method: http.MethodGet, Path: "/responses/{response_id}"},
	{ID: upstreams.OpResponsesDelete, Method: http.MethodDelete, Path: "/responses/{response_id}"},
	{ID: upstreams.OpResponsesInputItems, Method: http.MethodGet, Path: "/responses/{response_id}/input_items"},

	{ID: upstreams.OpConversationsCreate, Method: http.MethodPost, Path: "/conversations", Body: BodyJSON},
	{ID: upstreams.OpConversationsRetrieve, Method: http.MethodGet, Path: "/conversations/{conversation_id}"},
	{ID: upstreams.OpConversationsUpdate, Method: http.MethodPost, Path: "/conversations/{conversation_id}", Body: BodyJSON, BodyRequired: true},
	{ID: upstreams.OpConversationsDelete, Method: http.MethodDelete, Path: "/conversations/{conversation_id}"},
	{ID: upstreams.OpConversationItemsCreate, Method: http.MethodPost, Path: "/conversations/{conversation_id}/items", Body: BodyJSON, BodyRequired: true},
	{ID: upstreams.OpConversationItemsList, Method: http.MethodGet, Path: "/conversations/{conversation_id}/items"},
	{ID: upstreams.OpConversationItemsRetrieve, Method: http.MethodGet, Path: "/conversations/{conversation_id}/items/{item_id}"},
	{ID: upstreams.OpConversationItemsDelete, Method: http.MethodDelete, Path: "/conversations/{conversation_id}/items/{item_id}"},

	{ID: upstreams.OpCompletionsCreate, Method: http.MethodPost, Path: "/completions", Body: BodyJSON, BodyRequired: true},
	{ID: upstreams.OpModerationsCreate, Method: http.MethodPost, Path: "/moderations", Body: BodyJSON, BodyRequired: true},
	{ID: upstreams.OpImagesGenerate, Method: http.MethodPost, Path: "/images/generations", Body: BodyJSON, BodyRequired: true},
	{ID: upstreams.OpImagesEdit, Method: http.MethodPost, Path: "/images/edits", Body: BodyJSONOrMultipart, BodyRequired: true},
	{ID: upstreams.OpAudioSpeech, Method: http.MethodPost, Path: "/audio/speech", Body: BodyJSON, BodyRequired: true},
	{ID: upstreams.OpAudioTranscriptions, Method: http.MethodPost, Path: "/audio/transcriptions", Body: BodyMultipart, BodyRequired: true},
	{ID: upstreams.OpAudioTranslations, Method: http.MethodPost, Path: "/audio/translations", Body: BodyMultipart, BodyRequired: true},
}

// unlistedPaths are public operations outside the table whose paths a
// template's parameter would otherwise take: POST /threads/runs (create a
// thread and run it) is no update of a thread called "runs". They are
// unknown paths, passed through or refused as the routes say.
var unlistedPaths = []struct{ method, path string }{
	{http.MethodPost, "threads/runs"},
}

// unknownOperation stands for any /v1 path the table does not know.
var unknownOperation = Operation{ID: upstreams.OpUnknown, Body: BodyOpaque}

// providerOperations are served by an openai upstream by default (chat,
// embeddings, responses and conversations have offline defaults, see
// defaultUpstreamFor).
var providerOperations = map[string]bool{
	upstreams.OpModelsRetrieve: true, upstreams.OpEmbeddingsCreate: true,
	upstreams.OpResponsesCreate: true, upstreams.OpResponsesRetrieve: true, upstreams.OpResponsesDelete: true, upstreams.OpResponsesInputItems: true,
	upstreams.OpConversationsCreate: true, upstreams.OpConversationsRetrieve: true, upstreams.OpConversationsUpdate: true,
	upstreams.OpConversationsDelete: true, upstreams.OpConversationItemsCreate: true, upstreams.OpConversationItemsList: true,
	upstreams.OpConversationItemsRetrieve: true, upstreams.OpConversationItemsDelete: true,
	upstreams.OpCompletionsCreate: true, upstreams.OpModerationsCreate: true, upstreams.OpImagesGenerate: true,
	upstreams.OpImagesEdit: true, upstreams.OpAudioSpeech: true, upstreams.OpAudioTranscriptions: true,
	upstreams.OpAudioTranslations: true,
}

// apiPrefix is the version prefix every operation path carries.
const apiPrefix = "/v1"

func init() {
	for i := range operationTable {
		operationTable[i].segments = strings.Split(strings.Trim(operationTable[i].Path, "/"), "/")
	}
}

// operationByID returns the table row of an operation ID.
func operationByID(id string) (*Operation, bool) {
	for i := range operationTable {
		if operationTable[i].ID == id {
			return &operationTable[i], true
		}
	}
	return nil, false
}

// matchOperation finds the operation for a method and a path below /v1 and
// returns its path parameters. It allocates only for the parameters map.
func matchOperation(method, path string) (*Operation, map[string]string) {
	path = strings.Trim(path, "/")
	for _, u := range unlistedPaths {
		if u.method == method && u.path == path {
			return nil, nil
		}
	}
	n := strings.Count(path, "/") + 1
	for i := range operationTable {
		op := &operationTable[i]
		if op.Method != method || len(op.segments) != n {
			continue
		}
		if params, ok := matchSegments(op.segments, path); ok {
			return op, params
		}
	}
	return nil, nil
}

func matchSegments(template []string, path string) (map[string]string, bool) {
	var params map[string]string
	rest := path
	for _, want := range template {
		seg, tail, _ := strings.Cut(rest, "/")
		rest = tail
		if strings.HasPrefix(want, "{") {
			if seg == "" {
				return nil, false
			}
			if params == nil {
				params = make(map[string]string, 2)
			}
			params[want[1:len(want)-1]] = seg
			continue
		}
		if seg != want {
			return nil, false
		}
	}
	return params, true
}

// canonicalPath reports whether an escaped request path is in the one form
// the gateway matches and forwards: no segment that decodes to "." or ".."
// and no encoded slash or backslash inside a segment. A path that is not
// could be authorised as one operation and resolved by the provider as
// another (/v1/vector_stores/%2e%2e/files/x/content is files.content), so
// it is refused before matching rather than resolved.
func canonicalPath(escaped string) bool {
	for seg := range strings.SplitSeq(escaped, "/") {
		if strings.Contains(seg, "%") {
			lower := strings.ToLower(seg)
			if strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") {
				return false
			}
			dec, err := url.PathUnescape(seg)
			if err != nil {
				return false
			}
			seg = dec
		}
		if seg == "." || seg == ".." || strings.Contains(seg, "\\") {
			return false
		}
	}
	return true
}

// errNonCanonicalPath is the answer to a path canonicalPath refuses.
func errNonCanonicalPath(method string) *upstreams.Error {
	return upstreams.InvalidRequest("", "Invalid URL (%s): path segments may not be \".\" or \"..\" nor contain an encoded slash or backslash, plain or percent-encoded.", method)
}
