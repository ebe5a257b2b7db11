package local

import (
	"encoding/json"
	"fmt"
	"net/http"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
	"github.com/modelgate/modelgate/upstreams/local/vectorstores"
)

// vectorStores returns the store's vector store persistence, or the 501
// for a store that has none.
func (l *Local) vectorStores() (store.VectorStoreStore, error) {
	vs, why := store.VectorStoreSupport(l.store)
	if vs != nil && l.vectors != nil {
		return vs, nil
	}
	return nil, &upstreams.Error{Status: http.StatusNotImplemented, Type: upstreams.TypeNotImplemented,
		Message: "Vector stores are off: " + why + "."}
}

// vectorStoreHandler adapts a handler that needs the vector store
// persistence.
func vectorStoreHandler(h func(*Local, store.VectorStoreStore, http.ResponseWriter, *upstreams.Call) error) func(*Local, http.ResponseWriter, *upstreams.Call) error {
	return func(l *Local, w http.ResponseWriter, c *upstreams.Call) error {
		vs, err := l.vectorStores()
		if err != nil {
			return err
		}
		return h(l, vs, w, c)
	}
}

type expiresAfter struct {
	Anchor string `json:"anchor"`
	Days   int    `json:"days"`
}

type vectorStoreObject struct {
	ID           string           `json:"id"`
	Object       string           `json:"object"`
	CreatedAt    int64            `json:"created_at"`
	Name         string           `json:"name"`
	UsageBytes   int64            `json:"usage_bytes"`
	FileCounts   store.FileCounts `json:"file_counts"`
	Status       string           `json:"status"`
	LastActiveAt int64            `json:"last_active_at"`
	Metadata     json.RawMessage  `json:"metadata"`
	ExpiresAfter *expiresAfter    `json:"expires_after,omitempty"`
	ExpiresAt    *int64           `json:"expires_at"`
}

func toVectorStoreObject(v *store.VectorStore) vectorStoreObject {
	o := vectorStoreObject{ID: v.ID, Object: "vector_store", CreatedAt: v.CreatedAt, Name: v.Name, UsageBytes: v.UsageBytes,
		FileCounts: v.FileCounts, Status: store.FileCompleted, LastActiveAt: v.LastActiveAt, Metadata: orEmpty(v.Metadata)}
	if v.ExpiresAfterDays > 0 {
		at := v.LastActiveAt + int64(v.ExpiresAfterDays)*store.SecondsPerDay
		o.ExpiresAfter, o.ExpiresAt = &expiresAfter{Anchor: "last_active_at", Days: v.ExpiresAfterDays}, &at
	}
	switch {
	case v.Expired():
		o.Status = "expired"
	case v.FileCounts.InProgress > 0:
		o.Status = store.FileInProgress
	}
	return o
}

// chunkingStrategy is the request's chunking_strategy (auto or static).
type chunkingStrategy struct {
	Type   string `json:"type"`
	Static struct {
		MaxChunkSizeTokens int `json:"max_chunk_size_tokens"`
		ChunkOverlapTokens int `json:"chunk_overlap_tokens"`
	} `json:"static"`
}

// sizes returns the chunk size and overlap; nil or auto is 800/400.
func (cs *chunkingStrategy) sizes() (int, int) {
	if cs == nil || cs.Type != "static" {
		return vectorstores.AutoChunkTokens, vectorstores.AutoOverlapTokens
	}
	return cs.Static.MaxChunkSizeTokens, cs.Static.ChunkOverlapTokens
}

// newAttachment is a file about to be attached, ready for ingestion; a
// file not found is a 404 naming param, the field that held its ID.
func (l *Local) newAttachment(c *upstreams.Call, storeID, fileID, param string, cs *chunkingStrategy, attrs json.RawMessage) (*store.VectorStoreFile, error) {
	f, err := l.store.GetFile(c.Request.Context(), c.Principal.Owner, fileID)
	if err != nil {
		return nil, referenceNotFound(err, "file", fileID, param)
	}
	size, overlap := cs.sizes()
	if string(attrs) == "null" {
		attrs = nil
	}
	return &store.VectorStoreFile{VectorStoreID: storeID, FileID: fileID, Owner: c.Principal.Owner, KeyName: c.Principal.KeyName,
		CreatedAt: store.Now(), Status: store.FileInProgress, MaxChunkTokens: size, OverlapTokens: overlap, Attributes: attrs,
		EmbeddingModel: l.EmbeddingModel, Filename: f.Filename}, nil
}

func decodeBody(body []byte, v any) error {
	if len(body) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return upstreams.InvalidRequest("", "The request body could not be read: %s.", schemas.DescribeJSONError(err))
	}
	return nil
}

func (l *Local) createVectorStore(vs store.VectorStoreStore, w http.ResponseWriter, c *upstreams.Call) error {
	var b struct {
		Name             string            `json:"name"`
		FileIDs          []string          `json:"file_ids"`
		ChunkingStrategy *chunkingStrategy `json:"chunking_strategy"`
		ExpiresAfter     *expiresAfter     `json:"expires_after"`
		Metadata         json.RawMessage   `json:"metadata"`
	}
	if err := decodeBody(c.Body, &b); err != nil {
		return err
	}
	t := store.Now()
	v := &store.VectorStore{ID: store.NewID("vs_"), Owner: c.Principal.Owner, Name: b.Name, CreatedAt: t, LastActiveAt: t, Metadata: orEmpty(b.Metadata)}
	if b.ExpiresAfter != nil {
		v.ExpiresAfterDays = b.ExpiresAfter.Days
	}
	files := make([]store.VectorStoreFile, 0, len(b.FileIDs))
	for i, id := range b.FileIDs {
		f, err := l.newAttachment(c, v.ID, id, fmt.Sprintf("file_ids[%d]", i), b.ChunkingStrategy, nil)
		if err != nil {
			return err
		}
		files = append(files, *f)
	}
	if len(files) > 0 {
		if err := l.checkAttachRoom(c.Request.Context(), w, c.Principal.Owner, "file_ids"); err != nil {
			return err
		}
	}
	if err := vs.CreateVectorStore(c.Request.Context(), v, files); err != nil {
		return err
	}
	created, err := vs.GetVectorStore(c.Request.Context(), c.Principal.Owner, v.ID)
	if err != nil {
		return err
	}
	upstreams.WriteJSON(w, http.StatusOK, toVectorStoreObject(created))
	return nil
}

// pageQuery reads a vector store list's limit, order, after and before.
func pageQuery(c *upstreams.Call) (store.PageQuery, error) {
	q, err := listQuery(c, 20, 100)
	return store.PageQuery{ListQuery: q, Before: c.Request.URL.Query().Get("before")}, err
}

func (l *Local) listVectorStores(vs store.VectorStoreStore, w http.ResponseWriter, c *upstreams.Call) error {
	q, err := pageQuery(c)
	if err != nil {
		return err
	}
	stores, hasMore, err := vs.ListVectorStores(c.Request.Context(), c.Principal.Owner, q)
	if err != nil {
		return err
	}
	data := make([]vectorStoreObject, len(stores))
	for i := range stores {
		data[i] = toVectorStoreObject(&stores[i])
	}
	upstreams.WriteJSON(w, http.StatusOK, listPage(data, hasMore, func(v vectorStoreObject) string { return v.ID }))
	return nil
}

func (l *Local) retrieveVectorStore(vs store.VectorStoreStore, w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["vector_store_id"]
	v, err := vs.GetVectorStore(c.Request.Context(), c.Principal.Owner, id)
	if err != nil {
		return notFoundOr(err, "vector store", id)
	}
	upstreams.WriteJSON(w, http.StatusOK, toVectorStoreObject(v))
	return nil
}

func (l *Local) updateVectorStore(vs store.VectorStoreStore, w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["vector_store_id"]
	var b struct {
		Name         *string         `json:"name"`
		ExpiresAfter json.RawMessage `json:"expires_after"`
		Metadata     json.RawMessage `json:"metadata"`
	}
	if err := decodeBody(c.Body, &b); err != nil {
		return err
	}
	u := store.StoreUpdate{Name: b.Name}
	if b.Metadata != nil {
		u.Metadata = orEmpty(b.Metadata)
	}
	if b.ExpiresAfter != nil {
		var ea *expiresAfter
		if err := json.Unmarshal(b.ExpiresAfter, &ea); err != nil {
			return upstreams.InvalidRequest("expires_after", "expires_after must be an object or null.")
		}
		days := 0
		if ea != nil {
			days = ea.Days
		}
		u.ExpiresAfterDays = &days
	}
	v, err := vs.UpdateVectorStore(c.Request.Context(), c.Principal.Owner, id, u)
	if err != nil {
		return notFoundOr(err, "vector store", id)
	}
	upstreams.WriteJSON(w, http.StatusOK, toVectorStoreObject(v))
	return nil
}

func (l *Local) deleteVectorStore(vs store.VectorStoreStore, w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["vector_store_id"]
	if err := vs.DeleteVectorStore(c.Request.Context(), c.Principal.Owner, id); err != nil {
		return notFoundOr(err, "vector store", id)
	}
	l.vectors.Cache.Forget(id)
	upstreams.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "object": "vector_store.deleted", "deleted": true})
	return nil
}

// activeStore returns a store that can take files and searches: it
// exists for the caller and has not expired.
func activeStore(vs store.VectorStoreStore, c *upstreams.Call) (*store.VectorStore, error) {
	id := c.Params["vector_store_id"]
	v, err := vs.GetVectorStore(c.Request.Context(), c.Principal.Owner, id)
	if err != nil {
		return nil, notFoundOr(err, "vector store", id)
	}
	if v.Expired() {
		return nil, upstreams.InvalidRequest("vector_store_id", "The vector store %s has expired.", id)
	}
	return v, nil
}

type lastError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type vectorStoreFileObject struct {
	ID               string          `json:"id"`
	Object           string          `json:"object"`
	UsageBytes       int64           `json:"usage_bytes"`
	CreatedAt        int64           `json:"created_at"`
	VectorStoreID    string          `json:"vector_store_id"`
	Status           string          `json:"status"`
	LastError        *lastError      `json:"last_error"`
	ChunkingStrategy any             `json:"chunking_strategy"`
	Attributes       json.RawMessage `json:"attributes"`
}

func toVectorStoreFileObject(f *store.VectorStoreFile) vectorStoreFileObject {
	o := vectorStoreFileObject{ID: f.FileID, Object: "vector_store.file", UsageBytes: f.UsageBytes, CreatedAt: f.CreatedAt,
		VectorStoreID: f.VectorStoreID, Status: f.Status, Attributes: attributesOrNull(f),
		ChunkingStrategy: map[string]any{"type": "static", "static": map[string]int{
			"max_chunk_size_tokens": f.MaxChunkTokens, "chunk_overlap_tokens": f.OverlapTokens}}}
	if f.Status == store.FileFailed {
		o.LastError = &lastError{Code: f.LastErrorCode, Message: f.LastErrorMsg}
	}
	return o
}

func (l *Local) createVectorStoreFile(vs store.VectorStoreStore, w http.ResponseWriter, c *upstreams.Call) error {
	var b struct {
		FileID           string            `json:"file_id"`
		ChunkingStrategy *chunkingStrategy `json:"chunking_strategy"`
		Attributes       json.RawMessage   `json:"attributes"`
	}
	if err := decodeBody(c.Body, &b); err != nil {
		return err
	}
	v, err := activeStore(vs, c)
	if err != nil {
		return err
	}
	f, err := l.newAttachment(c, v.ID, b.FileID, "file_id", b.ChunkingStrategy, b.Attributes)
	if err != nil {
		return err
	}
	if err := l.checkAttachRoom(c.Request.Context(), w, c.Principal.Owner, "file_id"); err != nil {
		return err
	}
	attached, err := vs.AddVectorStoreFile(c.Request.Context(), f)
	if err != nil {
		return err
	}
	l.touch(vs, c, v.ID)
	upstreams.WriteJSON(w, http.StatusOK, toVectorStoreFileObject(attached))
	return nil
}

// touch records activity on a store, which its expiry counts from; a
// failure only delays the expiry, so it is logged.
func (l *Local) touch(vs store.VectorStoreStore, c *upstreams.Call, id string) {
	if err := vs.TouchVectorStore(c.Request.Context(), c.Principal.Owner, id, store.Now()); err != nil {
		l.logger.Warn("recording vector store activity", zap.String("vector_store", id), zap.Error(err))
	}
}

var fileStatuses = map[string]bool{store.FileInProgress: true, store.FileCompleted: true, store.FileFailed: true, store.FileCancelled: true}

func (l *Local) listVectorStoreFiles(vs store.VectorStoreStore, w http.ResponseWriter, c *upstreams.Call) error {
	q, err := pageQuery(c)
	if err != nil {
		return err
	}
	q.Status = c.Request.URL.Query().Get("filter")
	if q.Status != "" && !fileStatuses[q.Status] {
		return upstreams.InvalidRequest("filter", "filter must be one of in_progress, completed, failed, cancelled.")
	}
	id := c.Params["vector_store_id"]
	if _, err := vs.GetVectorStore(c.Request.Context(), c.Principal.Owner, id); err != nil {
		return notFoundOr(err, "vector store", id)
	}
	files, hasMore, err := vs.ListVectorStoreFiles(c.Request.Context(), c.Principal.Owner, id, q)
	if err != nil {
		return err
	}
	data := make([]vectorStoreFileObject, len(files))
	for i := range files {
		data[i] = toVectorStoreFileObject(&files[i])
	}
	upstreams.WriteJSON(w, http.StatusOK, listPage(data, hasMore, func(f vectorStoreFileObject) string { return f.ID }))
	return nil
}

func (l *Local) retrieveVectorStoreFile(vs store.VectorStoreStore, w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["file_id"]
	f, err := vs.GetVectorStoreFile(c.Request.Context(), c.Principal.Owner, c.Params["vector_store_id"], id)
	if err != nil {
		return notFoundOr(err, "vector store file", id)
	}
	upstreams.WriteJSON(w, http.StatusOK, toVectorStoreFileObject(f))
	return nil
}

func (l *Local) deleteVectorStoreFile(vs store.VectorStoreStore, w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["file_id"]
	if err := vs.DeleteVectorStoreFile(c.Request.Context(), c.Principal.Owner, c.Params["vector_store_id"], id); err != nil {
		return notFoundOr(err, "vector store file", id)
	}
	upstreams.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "object": "vector_store.file.deleted", "deleted": true})
	return nil
}

func (l *Local) vectorStoreFileContent(vs store.VectorStoreStore, w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["file_id"]
	text, err := vs.VectorStoreFileText(c.Request.Context(), c.Principal.Owner, c.Params["vector_store_id"], id)
	if err != nil {
		return notFoundOr(err, "vector store file", id)
	}
	data := []map[string]string{}
	if text != "" {
		data = append(data, map[string]string{"type": "text", "text": text})
	}
	upstreams.WriteJSON(w, http.StatusOK, map[string]any{"object": "vector_store.file_content.page", "data": data, "has_more": false, "next_page": nil})
	return nil
}

func attributesOrNull(f *store.VectorStoreFile) json.RawMessage {
	if f.Attributes == nil {
		return json.RawMessage("null")
	}
	return f.Attributes
}
