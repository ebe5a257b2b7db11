package conformance

import (
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
)

// The catalogue: each observable promise of the spec
// (spec/model-api-spec.md) and of the public API notes
// (spec/public-api-notes.md), sentence by sentence, with the checks that
// would fail if an implementation broke it, or why no check can see it.
// This file is a table; it is long because the spec is.

// Sentence is one promise of the spec or of the public API notes.
type Sentence struct {
	// ID is short and stable: spec.<section>.<n> or api.<section>.<n>.
	ID string `json:"id"`
	// Source is the document and section.
	Source string `json:"source"`
	Text   string `json:"text"`
	// Checks are the IDs of the checks that cover it; a trailing * is a
	// prefix (limits.metadata.*).
	Checks []string `json:"checks,omitempty"`
	// NotObservable says why no check can see the promise kept or broken.
	NotObservable string `json:"not_observable,omitempty"`
}

const (
	srcSpec = "model-api-spec.md"
	srcAPI  = "public-api-notes.md"
)

// Why a promise is out of the suite's sight.
const (
	whyClient      = "a rule for clients, not something the service answers"
	whyNotShown    = "the spec says \"not shown\"; the public API notes give the observable form, catalogued under api.*"
	whyModel       = "depends on the model behind the target (a real model may legitimately differ), so no verdict is a deviation"
	whyUnprovoked  = "needs a condition the suite cannot cause portably on an unknown target (quota, region, server fault, rate limit)"
	whyUnread      = "concerns stored data that no operation of the spec or the public API reads back"
	whyDescriptive = "describes purpose or history, not behaviour"
)

// Sentences returns the catalogue.
func Sentences() []Sentence { return slices.Clone(sentences) }

var sentences = []Sentence{
	// model-api-spec.md: What the service does
	{"spec.service.1", srcSpec + " What the service does", "The service is an HTTP API at {base_url} that exchanges JSON bodies.", []string{"errors.malformed-json", "chat.completion"}, ""},
	{"spec.service.2", srcSpec + " What the service does", "Chat completions: given messages and a model ID, return one or more choices; tool calling, structured output, log probabilities and streaming.", []string{"chat.completion", "chat.n", "chat.tools.*", "chat.response-format.*", "chat.logprobs", "chat.stream.*"}, ""},
	{"spec.service.3", srcSpec + " What the service does", "Batches: a job that executes, asynchronously, a file of many requests against one endpoint within a completion window.", []string{"batches.lifecycle"}, ""},
	{"spec.service.4", srcSpec + " What the service does", "Threads: create, retrieve, update and delete conversation containers.", []string{"threads.lifecycle"}, ""},
	{"spec.service.5", srcSpec + " What the service does", "Vector store files: attach an uploaded file, list, retrieve and detach.", []string{"vector_stores.files.lifecycle", "vector_stores.files.list"}, ""},
	{"spec.service.6", srcSpec + " What the service does", "Vector store search: query a vector store and get back relevant chunks with a relevance score.", []string{"vector_stores.search"}, ""},
	// Common rule: metadata
	{"spec.metadata.1", srcSpec + " Common rule: metadata", "A metadata field is an object of at most 16 pairs; keys at most 64 characters; values strings of at most 512 characters.", []string{"limits.metadata.*", "generated.*"}, ""},
	{"spec.metadata.2", srcSpec + " Common rule: metadata", "For the attributes of a vector store file, values may also be booleans or numbers.", []string{"limits.attributes.value-kinds.vector_stores.files.create", "vector_stores.files.round-trip"}, ""},
	// Batch
	{"spec.batch.object", srcSpec + " Batch", "object is always `batch`; endpoint, input_file_id, completion_window as created.", []string{"batches.lifecycle", "batches.round-trip"}, ""},
	{"spec.batch.status", srcSpec + " Batch", "status is one of validating, failed, in_progress, finalizing, completed, expired, cancelling, cancelled.", []string{"batches.lifecycle", "batches.cancel", "batches.input-file"}, ""},
	{"spec.batch.output", srcSpec + " Batch", "output_file_id: the file holding outputs of successfully executed requests.", []string{"batches.lifecycle"}, ""},
	{"spec.batch.error-file", srcSpec + " Batch", "error_file_id: the file holding outputs of requests that had errors.", []string{"invariant.induced-failure.batches.error-file", "invariant.aggregate.batches.request_counts"}, ""},
	{"spec.batch.created", srcSpec + " Batch", "created_at: Unix timestamp in seconds.", []string{"batches.created-seconds"}, ""},
	{"spec.batch.counts", srcSpec + " Batch", "request_counts: integers total, completed, failed; present in the create response.", []string{"batches.lifecycle"}, ""},
	{"spec.batch.metadata", srcSpec + " Batch", "metadata: see the metadata rule.", []string{"batches.round-trip", "limits.metadata.*.batches.create"}, ""},
	// Thread
	{"spec.thread.object", srcSpec + " Thread", "object is always `thread`; created_at in seconds.", []string{"threads.lifecycle", "threads.created-seconds"}, ""},
	{"spec.thread.defaults", srcSpec + " Thread", "metadata and tool_resources are an empty object when none was given.", []string{"threads.defaults"}, ""},
	{"spec.thread.tools", srcSpec + " Thread", "The code_interpreter tool takes a list of file IDs; the file_search tool takes a list of vector store IDs.", []string{"threads.round-trip"}, ""},
	{"spec.thread.message", srcSpec + " Thread", "Messages of a new thread: role user or assistant, content required, attachments and metadata optional.", []string{"threads.message-roles", "threads.lifecycle", "generated.threads.create.*"}, ""},
	// VectorStoreFile
	{"spec.vsfile.object", srcSpec + " VectorStoreFile", "object is always `vector_store.file`; vector_store_id the store attached to; status one of in_progress, completed, cancelled, failed; created_at in seconds.", []string{"vector_stores.files.lifecycle", "vector_stores.created-seconds"}, ""},
	// Search result
	{"spec.search.list", srcSpec + " Vector store search result", "The search response is a list object of search results of type `vector_store.search_result`.", []string{"vector_stores.search"}, ""},
	{"spec.search.order", srcSpec + " Vector store search result", "score: higher is more relevant; results are returned highest score first.", []string{"vector_stores.search"}, ""},
	{"spec.search.fields", srcSpec + " Vector store search result", "content is the text of the chunk, file_id the file it comes from, metadata its attributes.", []string{"vector_stores.search"}, ""},
	// ChatCompletion
	{"spec.chat.object", srcSpec + " ChatCompletion", "id unique; object always `chat.completion`; model used; usage total is prompt plus completion.", []string{"chat.completion"}, ""},
	{"spec.chat.created", srcSpec + " ChatCompletion", "created: Unix timestamp in seconds.", []string{"chat.created-seconds"}, ""},
	{"spec.chat.n", srcSpec + " ChatCompletion", "choices: more than one when request n is greater than 1; index is the position in choices.", []string{"chat.n", "chat.stream.n"}, ""},
	{"spec.chat.fingerprint", srcSpec + " ChatCompletion", "system_fingerprint can be compared across requests that use seed.", nil, "a comparison a client may make; the spec promises no outcome of it (seed is best effort)"},
	{"spec.chat.finish", srcSpec + " Choice", "finish_reason is one of stop, length, tool_calls, content_filter, function_call.", []string{"chat.finish-reason.length", "chat.stop", "chat.tools.forced"}, ""},
	{"spec.chat.toolcall", srcSpec + " Choice", "A tool call carries an id and a function with name and arguments (a JSON-encoded string).", []string{"chat.tools.*", "chat.stream.tools"}, ""},
	{"spec.chat.messages", srcSpec + " Request message", "developer, system, user (string or text parts), assistant (a returned message appended as is) and tool (content, tool_call_id) messages.", []string{"chat.message-kinds", "chat.tools.two-step"}, ""},
	{"spec.chat.image-part", srcSpec + " Request message", "Content parts of a user message include {type: image_url, image_url: {url}}.", nil, "supported modalities depend on the model (spec, Create chat completion); refusing images is not a deviation"},
	// States
	{"spec.states.batch", srcSpec + " States and transitions", "POST /v1/batches accepted: the batch is validating with request_counts 0, 0, 0.", []string{"batches.lifecycle"}, ""},
	{"spec.states.vsfile", srcSpec + " States and transitions", "VectorStoreFile states in_progress, completed, cancelled, failed.", []string{"vector_stores.files.lifecycle", "vector_stores.files.list"}, ""},
	// Endpoints
	{"spec.search.request", srcSpec + " Search vector store", "query is a string or an array of strings (multi-query); max_num_results 1 to 50; a filter on file attributes; a query-rewrite boolean; a further object.", []string{"vector_stores.search", "limits.vector_stores.search.max-num-results", "generated.vector_stores.search.*"}, ""},
	{"spec.search.beta", srcSpec + " Search vector store", "Requests carry the beta header.", []string{"vector_stores.search.beta-header"}, ""},
	{"spec.batch.create", srcSpec + " Create batch", "completion_window only 24h; endpoint one of the seven; input_file_id a JSONL file uploaded with purpose batch, up to 50,000 requests and 200 MB; metadata; output_expires_after.", []string{"limits.batches.*", "batches.input-file", "generated.batches.create.*"}, ""},
	{"spec.batch.200mb", srcSpec + " Create batch", "A batch input file is up to 200 MB.", nil, "a 200 MB upload does not fit CI's time and memory bounds; the 50,000-request bound is probed with --heavy"},
	{"spec.thread.create", srcSpec + " Create thread", "messages, tool_resources and metadata, all optional; the response is a Thread.", []string{"threads.lifecycle", "threads.defaults", "threads.round-trip", "generated.threads.create.*"}, ""},
	{"spec.thread.crud", srcSpec + " Retrieve, update, delete thread", "Retrieve returns a thread; update modifies it; delete deletes it.", []string{"threads.lifecycle"}, ""},
	{"spec.vsfile.create", srcSpec + " Create vector store file", "The file identifier is required; chunking strategy optional (auto when unset); attributes up to 16 pairs.", []string{"vector_stores.files.create-rules", "vector_stores.files.round-trip", "limits.metadata.*.vector_stores.files.create", "generated.vector_stores.files.create.*"}, ""},
	{"spec.vsfile.list", srcSpec + " List vector store files", "limit 1 to 100 default 20; sort order by created_at asc or desc (default desc); two cursors; a status filter.", []string{"vector_stores.files.list", "vector_stores.files.list.default-limit", "vector_stores.files.list.order", "limits.vector_stores.files.list.limit", "generated.vector_stores.files.list.*"}, ""},
	{"spec.vsfile.delete", srcSpec + " Delete vector store file", "Removes the file from the vector store; the file itself is not deleted.", []string{"vector_stores.files.lifecycle"}, ""},
	{"spec.chat.required", srcSpec + " Create chat completion", "messages and model are required.", []string{"errors.missing-required", "generated.chat.completions.create.*"}, ""},
	{"spec.chat.ranges", srcSpec + " Create chat completion", "temperature 0 to 2; stop up to 4; presence and frequency penalty -2 to 2; logit_bias -100 to 100; top_logprobs 0 to 20.", []string{"limits.chat.*", "generated.chat.completions.create.*"}, ""},
	{"spec.chat.max-tokens", srcSpec + " Create chat completion", "max_completion_tokens is an upper bound of generated tokens; max_tokens its deprecated form.", []string{"chat.max-completion-tokens", "chat.finish-reason.length"}, ""},
	{"spec.chat.stop", srcSpec + " Create chat completion", "Returned text excludes the stop sequence.", []string{"chat.stop"}, ""},
	{"spec.chat.logprobs", srcSpec + " Create chat completion", "logprobs true returns log probabilities of output tokens (default false).", []string{"chat.logprobs"}, ""},
	{"spec.chat.defaults", srcSpec + " Create chat completion", "Defaults: n 1, stream false.", []string{"chat.completion"}, ""},
	{"spec.chat.sampling", srcSpec + " Create chat completion", "temperature, top_p, presence/frequency penalty and seed shape sampling; seed is best effort.", nil, whyModel},
	{"spec.chat.tool-choice", srcSpec + " Create chat completion", "tool_choice none: no call; required: at least one; {function} forces it; auto: the model chooses.", []string{"chat.tools.choice-none", "chat.tools.choice-required", "chat.tools.forced"}, ""},
	{"spec.chat.parallel", srcSpec + " Create chat completion", "parallel_tool_calls enables parallel function calling (default true).", []string{"chat.tools.parallel"}, ""},
	{"spec.chat.format", srcSpec + " Create chat completion", "response_format json_schema: output matches the schema; json_object: valid JSON.", []string{"chat.response-format.*"}, ""},
	{"spec.chat.optional", srcSpec + " Create chat completion", "reasoning_effort one of none, minimal, low, medium, high, xhigh; user; metadata; store are accepted.", []string{"generated.chat.completions.create.*", "limits.metadata.*.chat.completions.create"}, ""},
	{"spec.chat.store-images", srcSpec + " Limits", "Chat store: image inputs over 8 MB are dropped.", nil, whyUnread},
	{"spec.toolflow", srcSpec + " Tool-call flow rules", "Rules 1-3: tool_calls with finish_reason tool_calls; the answer with one tool message per call; several calls with parallel_tool_calls.", []string{"chat.tools.two-step", "chat.tools.parallel", "chat.tools.forced"}, ""},
	// Authentication, events, errors, versioning
	{"spec.auth.bearer", srcSpec + " Authentication", "Credential: Authorization: Bearer <API_KEY>.", []string{"auth.*"}, ""},
	{"spec.auth.content-type", srcSpec + " Authentication", "Requests with a body carry Content-Type: application/json.", nil, whyClient},
	{"spec.auth.beta", srcSpec + " Authentication", "Search and thread operations carry Vendor-Beta: assistants=v2; the batch example carries none.", []string{"threads.beta-header", "vector_stores.search.beta-header", "batches.lifecycle"}, ""},
	{"spec.auth.keys", srcSpec + " Authentication", "How keys are issued, their scopes, the response to missing or invalid credentials: not shown.", nil, whyNotShown},
	{"spec.events.stream", srcSpec + " Events", "With stream true the response is delivered as server-sent events while it is generated.", []string{"chat.stream.*"}, ""},
	{"spec.errors", srcSpec + " Errors", "Error body shape, codes and statuses: not shown.", nil, whyNotShown},
	{"spec.ratelimits", srcSpec + " Limits", "Rate limits and quotas: not shown.", nil, whyNotShown},
	{"spec.version.v1", srcSpec + " Versioning", "Paths carry the version prefix /v1.", []string{"errors.unknown-path"}, ""},
	{"spec.version.deprecated", srcSpec + " Versioning", "Threads, max_tokens, user are deprecated; seed is beta.", nil, whyDescriptive},

	// public-api-notes.md
	{"api.error.envelope", srcAPI + " 1.1", "Every error is {error: {message, type, param, code}}, all four present.", []string{"errors.*", "auth.*", "limits.*"}, ""},
	{"api.error.400", srcAPI + " 1.2", "400: type invalid_request_error, param naming the field.", []string{"errors.missing-required", "errors.malformed-json", "limits.*", "generated.*", "files.upload-rules", "threads.message-roles", "vector_stores.files.create-rules"}, ""},
	{"api.error.401", srcAPI + " 1.2", "401: missing key (code null, \"You didn't provide an API key\"), wrong key (code invalid_api_key, \"Incorrect API key provided\").", []string{"auth.*"}, ""},
	{"api.error.404", srcAPI + " 1.2", "404 for an unknown object (type invalid_request_error) and for an unknown path.", []string{"errors.unknown-id.*", "errors.unknown-path", "files.lifecycle", "threads.lifecycle", "vector_stores.lifecycle"}, ""},
	{"api.error.other", srcAPI + " 1.2", "403, 409, 422, 429 (rate_limit_exceeded, insufficient_quota) and >=500 (server_error).", nil, whyUnprovoked},
	{"api.retry", srcAPI + " 1.3", "The SDKs retry 408, 409, 429 and >=500; x-should-retry and retry-after headers steer them.", nil, whyClient},
	{"api.ratelimit-headers", srcAPI + " 1.4", "x-ratelimit-* headers; Retry-After on 429.", nil, whyUnprovoked},
	{"api.chat.request", srcAPI + " 2.1", "Request fields and ranges: top_p 0-1, n 1-128, stop 1-4 items, metadata rule, enums of reasoning_effort and service_tier.", []string{"generated.chat.completions.create.*", "limits.chat.*"}, ""},
	{"api.chat.response", srcAPI + " 2.2", "Required response fields; each choice has index, finish_reason, message (role, content, refusal) and logprobs.", []string{"chat.completion"}, ""},
	{"api.chat.toolcall", srcAPI + " 2.3", "A tool call has id, type function, function.name and function.arguments (a JSON string).", []string{"chat.tools.*"}, ""},
	{"api.chat.logprobs", srcAPI + " 2.4", "logprobs {content, refusal}; each token with token, logprob, bytes, top_logprobs.", []string{"chat.logprobs"}, ""},
	{"api.stream.format", srcAPI + " 2.5", "text/event-stream; data: <json> events; ends with data: [DONE]; id the same in every chunk; object chat.completion.chunk.", []string{"chat.stream.*"}, ""},
	{"api.stream.delta", srcAPI + " 2.5", "role in the first delta; finish_reason null until the last chunk of a choice.", []string{"chat.stream.basic", "chat.stream.n"}, ""},
	{"api.stream.toolcall", srcAPI + " 2.5", "The first delta of a tool call carries index, id, type, function.name; later ones index and argument fragments.", []string{"chat.stream.tools"}, ""},
	{"api.stream.usage", srcAPI + " 2.5", "include_usage: one more chunk before [DONE] with usage and empty choices; usage null elsewhere.", []string{"chat.stream.usage"}, ""},
	{"api.stream.length", srcAPI + " 2.5", "finish_reason length when the token limit cut the reply, streamed or not.", []string{"chat.finish-reason.length"}, ""},
	{"api.stream.paced", srcAPI + " 2.5", "Events are delivered while the reply is generated, not held back to the end.", []string{"chat.stream.paced"}, ""},
	{"api.stream.error", srcAPI + " 2.5", "An error in the middle of a stream is data: {error: {...}}.", nil, whyUnprovoked},
	{"api.files.ops", srcAPI + " 3", "Files: multipart upload (file, purpose), list, retrieve, delete (object file, deleted true), raw content.", []string{"files.lifecycle", "files.upload-rules"}, ""},
	{"api.files.fields", srcAPI + " 3", "OpenAIFile filename, purpose and bytes as uploaded; created_at in seconds.", []string{"files.round-trip", "files.lifecycle", "files.created-seconds"}, ""},
	{"api.files.list", srcAPI + " 3", "files.list: purpose filter, limit, order asc|desc (d=desc), after.", []string{"files.list.paging", "files.list.order", "files.round-trip"}, ""},
	{"api.files.delete-detaches", srcAPI + " 3", "Deleting a file also removes it from all vector stores.", []string{"vector_stores.files.file-deleted"}, ""},
	{"api.files.size", srcAPI + " 3", "512 MB per file, 2.5 TB per project.", nil, "uploads of that size do not fit CI's bounds; body bounds are tested by the gateway's own suites"},
	{"api.paging", srcAPI + " 3", "Lists always send has_more; every item has an id; after is the last item's id.", []string{"files.list.paging", "vector_stores.files.list", "*.list.order"}, ""},
	{"api.batches.cancel", srcAPI + " 4", "Cancel answers the batch cancelling; it then becomes cancelled.", []string{"batches.cancel"}, ""},
	{"api.batches.create", srcAPI + " 4", "CreateBatchRequest: endpoint enum, completion_window 24h, metadata, output_expires_after {anchor created_at, seconds 3600-2592000}.", []string{"generated.batches.create.*", "limits.batches.*"}, ""},
	{"api.batches.object", srcAPI + " 4", "Batch fields; the create response has status validating and request_counts 0.", []string{"batches.lifecycle", "batches.round-trip"}, ""},
	{"api.batches.list", srcAPI + " 4", "batches.list: after, limit 1-100 (d=20).", []string{"batches.round-trip", "generated.batches.list.*"}, ""},
	{"api.batches.lines", srcAPI + " 4", "Input lines: custom_id unique, method POST, url matching the endpoint; output lines matched by custom_id.", []string{"batches.lifecycle", "batches.validation-errors"}, ""},
	{"api.batches.validation", srcAPI + " 4", "A file that fails validation: the batch is created, then failed with errors.data entries (code, line).", []string{"batches.input-file", "batches.validation-errors"}, ""},
	{"api.threads", srcAPI + " 5", "Threads: create (may be empty), retrieve, update (metadata, tool_resources), delete (thread.deleted).", []string{"threads.*"}, ""},
	{"api.vectorstores", srcAPI + " 6.1", "Vector stores: create with name and metadata, retrieve, update, list, delete (vector_store.deleted).", []string{"vector_stores.lifecycle", "vector_stores.list.order"}, ""},
	{"api.vsfile.request", srcAPI + " 6.2", "CreateVectorStoreFileRequest: file_id, chunking_strategy (static: max 100-4096, overlap at most half), attributes.", []string{"vector_stores.files.round-trip", "limits.vector_stores.files.chunking", "generated.vector_stores.files.create.*"}, ""},
	{"api.vsfile.update", srcAPI + " 6.2", "POST /vector_stores/{vs}/files/{id} updates attributes.", nil, "not an operation of the spec; modelgate does not serve it, so a check could not be clean against it"},
	{"api.vsfile.content", srcAPI + " 6.2", "GET /vector_stores/{vs}/files/{id}/content and file batches.", nil, "not operations of the spec; left to the SDK compatibility suites"},
	{"api.search", srcAPI + " 7", "Search request: query, rewrite_query, max_num_results (d=10), filters (comparison and compound), ranking_options; response dialect of the profile.", []string{"vector_stores.search", "generated.vector_stores.search.*"}, ""},
	{"api.beta", srcAPI + " 9", "Without the beta header thread operations answer 400 invalid_beta; vector stores accept the header.", []string{"threads.beta-header", "vector_stores.*"}, ""},
	{"api.isolation", srcAPI + " 1.2", "An object of another owner is not found (404) and never listed.", []string{"*.isolation"}, ""},
	{"api.sdk-tests", srcAPI + " 8", "Running the SDKs' own suites against a gateway.", nil, whyDescriptive},
}

// covers reports whether a check ID matches a catalogue pattern.
func covers(pattern, id string) bool {
	ok, _ := path.Match(pattern, id)
	return ok || pattern == id
}

// ChecksMatching returns the IDs of the checks a catalogue pattern names.
func ChecksMatching(pattern string) []string {
	var out []string
	for _, ch := range Checks() {
		if covers(pattern, ch.ID) {
			out = append(out, ch.ID)
		}
	}
	return out
}

// SentencesOf returns the IDs of the sentences a check covers.
func SentencesOf(checkID string) []string {
	var out []string
	for _, s := range sentences {
		for _, p := range s.Checks {
			if covers(p, checkID) {
				out = append(out, s.ID)
				break
			}
		}
	}
	return out
}

// WriteCatalogue writes `conformance list`: every check with the
// sentences it covers and its spec text, then every sentence with the
// checks covering it, then the sentences no check can see, and why, then
// the invariant families and the response fields of each operation.
func WriteCatalogue(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# checks: id, area, sentences covered, spec\n")
	for _, ch := range Checks() {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", ch.ID, ch.Area, strings.Join(SentencesOf(ch.ID), ","), ch.Spec)
	}
	b.WriteString("\n# sentences covered: id, source, text, checks\n")
	var unseen []Sentence
	for _, s := range sentences {
		if s.NotObservable != "" {
			unseen = append(unseen, s)
			continue
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", s.ID, s.Source, s.Text, strings.Join(s.Checks, ","))
	}
	b.WriteString("\n# sentences not observable: id, source, text, why\n")
	for _, s := range unseen {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", s.ID, s.Source, s.Text, s.NotObservable)
	}
	writeFamilies(&b)
	writeFieldCatalogue(&b)
	_, err := io.WriteString(w, b.String())
	return err
}
