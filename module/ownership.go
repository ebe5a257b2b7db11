package modelgate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/modelgate/modelgate/internal/sse"
	"github.com/modelgate/modelgate/upstreams"
)

// A provider keeps the objects a request through it creates (responses,
// files, vector stores, batches, conversations, threads) under the
// gateway's provider key, for every key of the gateway alike. The gateway
// therefore records who created each (the owner ledger, the local store's
// provider_objects) from the provider's create replies, and hands an
// object only to its owner: a path or a request body naming an object
// another owner created, or one not created through the gateway, is the
// 404 a missing object gets; the lists are filtered to the owner's
// objects; a delete forgets the row.

// Object kinds, as the 404 messages name them.
const (
	kindResponse     = "response"
	kindFile         = "file"
	kindVectorStore  = "vector store"
	kindBatch        = "batch"
	kindConversation = "conversation"
	kindThread       = "thread"
)

// pathKinds are the collections whose next path segment is an object's
// ID.
var pathKinds = map[string]string{
	"responses": kindResponse, "files": kindFile, "vector_stores": kindVectorStore,
	"batches": kindBatch, "conversations": kindConversation, "threads": kindThread,
}

// createdKinds are the kinds the operations' replies create.
var createdKinds = map[string]string{
	upstreams.OpResponsesCreate: kindResponse, upstreams.OpFilesCreate: kindFile,
	upstreams.OpVectorStoresCreate: kindVectorStore, upstreams.OpBatchesCreate: kindBatch,
	upstreams.OpConversationsCreate: kindConversation, upstreams.OpThreadsCreate: kindThread,
}

// deletedKinds are the kinds the operations delete, with the path
// parameter naming the object.
var deletedKinds = map[string][2]string{
	upstreams.OpResponsesDelete: {"response_id", kindResponse}, upstreams.OpFilesDelete: {"file_id", kindFile},
	upstreams.OpVectorStoresDelete: {"vector_store_id", kindVectorStore}, upstreams.OpConversationsDelete: {"conversation_id", kindConversation},
	upstreams.OpThreadsDelete: {"thread_id", kindThread},
}

// listedKinds are the kinds of the provider lists the gateway filters.
var listedKinds = map[string]string{
	upstreams.OpFilesList: kindFile, upstreams.OpBatchesList: kindBatch, upstreams.OpVectorStoresList: kindVectorStore,
}

// provisionLedger picks the owner ledger when a provider serves an
// operation: the first loaded upstream that is one (by name), else the
// built-in local store.
func (g *Gateway) provisionLedger(loaded map[string]upstreams.Upstream, load func(string) (upstreams.Upstream, error)) error {
	forwards := false
	for _, or := range g.routes {
		for _, r := range or.routes {
			for _, t := range append(r.primaries[:len(r.primaries):len(r.primaries)], r.fallbacks...) {
				_, ok := t.upstream.(upstreams.Forwarder)
				forwards = forwards || ok
			}
		}
	}
	if !forwards {
		return nil
	}
	names := make([]string, 0, len(loaded))
	for name := range loaded {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if l, ok := loaded[name].(upstreams.OwnerLedger); ok {
			g.ledger = l
			return nil
		}
	}
	u, err := load(builtinLocal)
	if err != nil {
		return fmt.Errorf("modelgate: the owner ledger of provider objects: %w", err)
	}
	l, ok := u.(upstreams.OwnerLedger)
	if !ok {
		return fmt.Errorf("modelgate: the upstream %s keeps no owners of provider objects", builtinLocal)
	}
	g.ledger = l
	return nil
}

// checkOwners refuses a call to a provider that names, in its path or
// its body, an object its owner did not create through the gateway.
func (g *Gateway) checkOwners(call *upstreams.Call) error {
	ctx, owner := call.Request.Context(), call.Principal.Owner
	// The first object of a path holds the rest: a vector store's files,
	// a conversation's items, a thread's runs.
	path := strings.Trim(strings.TrimPrefix(call.Request.URL.Path, apiPrefix), "/")
	collection, rest, _ := strings.Cut(path, "/")
	id, _, _ := strings.Cut(rest, "/")
	if kind, ok := pathKinds[collection]; ok && id != "" && !(kind == kindThread && id == "runs") {
		if err := g.ownObject(ctx, owner, kind, id, ""); err != nil {
			return err
		}
	}
	if call.Body == nil {
		return nil
	}
	doc, err := call.Document()
	if err != nil {
		return nil // not a JSON object: it names nothing
	}
	for _, ref := range bodyReferences(call.Operation, doc) {
		if err := g.ownObject(ctx, owner, ref.kind, ref.id, ref.param); err != nil {
			return err
		}
	}
	return nil
}

// ownObject is nil when owner created the object, else the 404 a missing
// one gets (param naming the field of a body that held the ID).
func (g *Gateway) ownObject(ctx context.Context, owner, kind, id, param string) error {
	got, err := g.ledger.OwnerOf(ctx, kind, id)
	if err != nil {
		return err
	}
	switch {
	case got == owner:
		return nil
	case param == "previous_response_id": // as the local store answers it
		return &upstreams.Error{Status: http.StatusNotFound, Type: upstreams.TypeInvalidRequest, Param: param,
			Code: "previous_response_not_found", Message: fmt.Sprintf("Previous response with id '%s' not found.", id)}
	}
	return &upstreams.Error{Status: http.StatusNotFound, Type: upstreams.TypeInvalidRequest, Param: param,
		Message: fmt.Sprintf("No %s found with id '%s'.", kind, id)}
}

// ownReply keeps the ledger in step with a provider's 2xx reply before
// the client sees it: the object it creates recorded for the caller's
// owner (a stream's on its response.created event), the one it deletes
// forgotten, a list filtered to the owner's objects, the files a batch
// wrote recorded for the batch's owner. It returns the reply to relay.
func (g *Gateway) ownReply(f upstreams.Forwarder, call *upstreams.Call, resp *http.Response) (*http.Response, error) {
	if resp.StatusCode >= 300 {
		return resp, nil
	}
	ctx, owner, op := call.Request.Context(), call.Principal.Owner, call.Operation
	if kind, ok := listedKinds[op]; ok {
		return g.filterList(f, call, resp, kind)
	}
	if d, ok := deletedKinds[op]; ok {
		return resp, g.ledger.ForgetOwner(ctx, d[1], call.Params[d[0]])
	}
	kind, creates := createdKinds[op]
	batch := op == upstreams.OpBatchesRetrieve || op == upstreams.OpBatchesCancel
	if !creates && !batch {
		return resp, nil
	}
	if upstreams.IsEventStream(resp.Header) {
		resp.Body = &createdEvents{ReadCloser: resp.Body, record: func(id string) error {
			return g.ledger.RecordOwner(ctx, kind, id, owner)
		}}
		return resp, nil
	}
	body, err := g.readReply(resp)
	if err != nil {
		return nil, err
	}
	// A reply that is no object with an id names nothing anyone could
	// reach again; it is relayed as it is (and checked as any reply).
	var obj ownedObject
	if json.Unmarshal(body, &obj) != nil {
		return resp, nil
	}
	if creates && obj.ID != "" {
		if err := g.ledger.RecordOwner(ctx, kind, obj.ID, owner); err != nil {
			return nil, err
		}
	}
	return resp, g.recordBatchFiles(ctx, owner, []ownedObject{obj})
}

// retryLater is err, the owner ledger's 503 (its store busy or
// unreachable) sent with Retry-After, as the local store sends it.
func retryLater(w http.ResponseWriter, err error) error {
	if e, ok := errors.AsType[*upstreams.Error](err); ok && e.Status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	return err
}

// ownedObject is what the gateway reads of a provider's object: its ID,
// and a batch's files.
type ownedObject struct {
	ID           string `json:"id"`
	OutputFileID string `json:"output_file_id"`
	ErrorFileID  string `json:"error_file_id"`
}

// recordBatchFiles records the files batches wrote for their owner.
func (g *Gateway) recordBatchFiles(ctx context.Context, owner string, batches []ownedObject) error {
	for _, b := range batches {
		for _, id := range []string{b.OutputFileID, b.ErrorFileID} {
			if id == "" {
				continue
			}
			if err := g.ledger.RecordOwner(ctx, kindFile, id, owner); err != nil {
				return err
			}
		}
	}
	return nil
}

// readReply reads a JSON reply whole, within max_body_size, and leaves
// its bytes in resp for the relay.
func (g *Gateway) readReply(resp *http.Response) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, g.MaxBodySize+1))
	if err != nil || int64(len(body)) > g.MaxBodySize {
		return nil, &upstreams.Error{Status: http.StatusBadGateway, Type: upstreams.TypeServer, Code: "upstream_error",
			Message: "The upstream reply was cut short or is larger than max_body_size."}
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	return body, nil
}

// maxCreatedScan bounds how much of a stream is read for its
// response.created event, the first.
const maxCreatedScan = 1 << 20

// createdEvents passes a Responses stream on, recording the response's
// owner from its response.created event before that event's bytes are
// handed on, so that a client never holds an ID the ledger does not.
type createdEvents struct {
	io.ReadCloser
	record  func(id string) error
	split   *sse.Splitter
	scanned int
	done    bool
	err     error
}

func (c *createdEvents) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	if c.done || n == 0 {
		return n, err
	}
	if c.split == nil {
		c.split = &sse.Splitter{Max: maxCreatedScan, OnEvent: c.onEvent}
	}
	c.scanned += n
	if _, serr := c.split.Write(p[:n]); serr != nil || (!c.done && c.scanned > maxCreatedScan) {
		c.done, c.err = true, fmt.Errorf("the stream has no response.created event in its first %d bytes", maxCreatedScan)
	}
	if c.err != nil {
		return 0, c.err
	}
	return n, err
}

func (c *createdEvents) onEvent(ev sse.Event) {
	if c.done {
		return
	}
	var created struct {
		Type     string `json:"type"`
		Response struct {
			ID string `json:"id"`
		} `json:"response"`
	}
	if json.Unmarshal(ev.Data, &created) != nil || created.Type != "response.created" {
		return
	}
	c.done = true
	if created.Response.ID != "" { // else nothing can be reached again
		c.err = c.record(created.Response.ID)
	}
}
