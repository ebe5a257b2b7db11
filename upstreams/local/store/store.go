package store

import (
	"context"
	"encoding/json"
	"errors"
	"io"
)

// ErrNotFound is returned for a missing object and for another owner's
// object alike, so that existence is never revealed.
var ErrNotFound = errors.New("not found")

// File is a stored file's metadata.
type File struct {
	ID        string
	Owner     string
	Filename  string
	Purpose   string
	Bytes     int64
	CreatedAt int64
	ExpiresAt *int64
	// Lines is how many lines the content has (the last one may lack its
	// newline); nil where it was not counted.
	Lines *int64
	// Quota, when positive, bounds the owner's stored bytes as InsertFile
	// lists the file: ErrOverQuota if they would pass it. Not stored.
	Quota int64
}

// Thread is a stored thread.
type Thread struct {
	ID            string
	Owner         string
	CreatedAt     int64
	Metadata      json.RawMessage
	ToolResources json.RawMessage
}

// ThreadMessage is a message a thread was created with.
type ThreadMessage struct {
	ID          string
	Role        string
	Content     json.RawMessage // the public content-part array
	Attachments json.RawMessage
	Metadata    json.RawMessage
	CreatedAt   int64
}

// FileStore keeps files: metadata rows and their contents.
type FileStore interface {
	// WriteFileContent durably stores content for the file ID about to be
	// inserted and returns its size. Until InsertFile the file is not
	// listed; content never followed by InsertFile is removed at the next
	// open (or by DiscardFileContent).
	WriteFileContent(ctx context.Context, id string, content io.Reader) (int64, error)
	DiscardFileContent(id string) error
	// InsertFile lists a file whose content is stored.
	InsertFile(ctx context.Context, f *File) error
	GetFile(ctx context.Context, owner, id string) (*File, error)
	ListFiles(ctx context.Context, owner string, q ListQuery) (files []File, hasMore bool, err error)
	// OpenFile returns the file's content.
	OpenFile(ctx context.Context, owner, id string) (io.ReadCloser, error)
	// DeleteFile removes a file and its content, expired or not.
	DeleteFile(ctx context.Context, owner, id string) error
	// ExpiredFiles lists up to limit files, of any owner, whose expires_at
	// is at or before at. GetFile, ListFiles and OpenFile see none of them.
	ExpiredFiles(ctx context.Context, at int64, limit int) ([]File, error)
	// StoredBytes is what the owner keeps: its files, what ingestion
	// stored for its vector stores' files, and its batches' results not
	// yet written to files, but batch besides's ("" for none).
	StoredBytes(ctx context.Context, owner, besides string) (int64, error)
}

// ThreadStore keeps threads and the messages they were created with.
type ThreadStore interface {
	CreateThread(ctx context.Context, t *Thread, msgs []ThreadMessage) error
	GetThread(ctx context.Context, owner, id string) (*Thread, error)
	// UpdateThread replaces the fields given (nil ones stay).
	UpdateThread(ctx context.Context, owner, id string, metadata, toolResources json.RawMessage) (*Thread, error)
	DeleteThread(ctx context.Context, owner, id string) error
	ThreadMessages(ctx context.Context, owner, threadID string) ([]ThreadMessage, error)
}

// Store keeps the local implementations' objects; every method is scoped
// to an owner. Every store keeps files, threads, responses, conversations
// and batches; vector stores are an interface of their own, which a store
// implements when it can keep them.
type Store interface {
	FileStore
	ThreadStore
	ResponseStore
	ConversationStore
	ProviderObjectStore
	BatchStore
	// Ping reports whether the store can be reached now.
	Ping(ctx context.Context) error
	Close() error
}
