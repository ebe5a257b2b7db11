package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// threadReferences are the IDs a thread body names: files for code
// interpreter and message attachments, vector stores for file search, and
// files for a vector store the request asks to be made.
type threadReferences struct {
	CodeInterpreter *struct {
		FileIDs []string `json:"file_ids"`
	} `json:"code_interpreter"`
	FileSearch *struct {
		VectorStoreIDs []string `json:"vector_store_ids"`
		VectorStores   []struct {
			FileIDs []string `json:"file_ids"`
		} `json:"vector_stores"`
	} `json:"file_search"`
}

// checkThreadReferences refuses a thread body that names a file or a vector
// store the caller does not own, with the 404 a missing one gets (param
// naming the field), so that another owner's objects can be neither used
// nor probed.
func (l *Local) checkThreadReferences(ctx context.Context, owner string, b *threadBody) error {
	for i, m := range b.Messages {
		var attachments []struct {
			FileID string `json:"file_id"`
		}
		if len(m.Attachments) > 0 && json.Unmarshal(m.Attachments, &attachments) != nil {
			return upstreams.InvalidRequest(fmt.Sprintf("messages[%d].attachments", i), "attachments must be an array of objects with a file_id.")
		}
		for j, a := range attachments {
			if err := l.ownFile(ctx, owner, a.FileID, fmt.Sprintf("messages[%d].attachments[%d].file_id", i, j)); err != nil {
				return err
			}
		}
	}
	if len(b.ToolResources) == 0 || string(b.ToolResources) == "null" {
		return nil
	}
	var refs threadReferences
	if json.Unmarshal(b.ToolResources, &refs) != nil {
		return upstreams.InvalidRequest("tool_resources", "tool_resources must be an object of code_interpreter and file_search resources.")
	}
	if ci := refs.CodeInterpreter; ci != nil {
		for i, id := range ci.FileIDs {
			if err := l.ownFile(ctx, owner, id, fmt.Sprintf("tool_resources.code_interpreter.file_ids[%d]", i)); err != nil {
				return err
			}
		}
	}
	fs := refs.FileSearch
	if fs == nil {
		return nil
	}
	for i, id := range fs.VectorStoreIDs {
		if err := l.ownVectorStore(ctx, owner, id, fmt.Sprintf("tool_resources.file_search.vector_store_ids[%d]", i)); err != nil {
			return err
		}
	}
	for i, helper := range fs.VectorStores {
		for j, id := range helper.FileIDs {
			if err := l.ownFile(ctx, owner, id, fmt.Sprintf("tool_resources.file_search.vector_stores[%d].file_ids[%d]", i, j)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *Local) ownFile(ctx context.Context, owner, id, param string) error {
	_, err := l.store.GetFile(ctx, owner, id)
	return referenceNotFound(err, "file", id, param)
}

func (l *Local) ownVectorStore(ctx context.Context, owner, id, param string) error {
	vs, off := l.vectorStores()
	if off != nil {
		return referenceNotFound(store.ErrNotFound, "vector store", id, param) // none exists
	}
	_, err := vs.GetVectorStore(ctx, owner, id)
	return referenceNotFound(err, "vector store", id, param)
}

// referenceNotFound is notFoundOr naming the field that held the ID.
func referenceNotFound(err error, kind, id, param string) error {
	if errors.Is(err, store.ErrNotFound) {
		return &upstreams.Error{Status: http.StatusNotFound, Type: upstreams.TypeInvalidRequest, Param: param,
			Message: fmt.Sprintf("No %s found with id '%s'.", kind, id)}
	}
	return err
}
