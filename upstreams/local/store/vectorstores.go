package store

import (
	"context"
	"encoding/json"
	"math"
)

// Vector store file statuses.
const (
	FileInProgress = "in_progress"
	FileCompleted  = "completed"
	FileFailed     = "failed"
	FileCancelled  = "cancelled"
)

// VectorStore is a stored vector store; FileCounts and UsageBytes are
// computed from its files when read.
type VectorStore struct {
	ID           string
	Owner        string
	Name         string
	CreatedAt    int64
	LastActiveAt int64
	Metadata     json.RawMessage
	// ExpiresAfterDays is expires_after.days (anchor last_active_at); 0 for none.
	ExpiresAfterDays int
	FileCounts       FileCounts
	UsageBytes       int64
}

// FileCounts counts a vector store's files by status.
type FileCounts struct {
	InProgress int64 `json:"in_progress"`
	Completed  int64 `json:"completed"`
	Failed     int64 `json:"failed"`
	Cancelled  int64 `json:"cancelled"`
	Total      int64 `json:"total"`
}

// VectorStoreFile is a file attached to a vector store, and the ingestion
// job that indexes it while its status is in_progress.
type VectorStoreFile struct {
	VectorStoreID string
	FileID        string
	Owner         string
	// KeyName is the key that attached the file: its embeddings are
	// requested on that key's behalf, under its limits.
	KeyName        string
	CreatedAt      int64
	Status         string
	LastErrorCode  string
	LastErrorMsg   string
	UsageBytes     int64
	MaxChunkTokens int
	OverlapTokens  int
	// Attributes is the JSON object of attributes, or nil.
	Attributes json.RawMessage
	// EmbeddingModel is the model its chunks are embedded with; "" for
	// a text-only (BM25) index.
	EmbeddingModel string
	// Filename is the attached file's name, for search results.
	Filename string
	// LeaseOwner is the worker holding the attachment's ingestion (as
	// ClaimIngestions returned it); "" when none ever claimed it.
	LeaseOwner string
	// Attempts is how many times its ingestion was claimed (this claim
	// included) and not given back: claims of workers that died with it.
	Attempts int
	// Quota, when positive, bounds the owner's stored bytes as
	// CompleteIngestion stores the file's text and chunks: ErrOverQuota
	// if they would pass it. Not stored.
	Quota int64
}

// Chunk is one indexed piece of a vector store file.
type Chunk struct {
	ID        int64
	FileID    string
	Index     int
	Text      string
	Embedding []float32
}

// ScoredChunk is a chunk ID with a raw relevance from one index.
type ScoredChunk struct {
	ID    int64
	Score float64
}

// StoreUpdate is a vector store modification; nil fields stay.
type StoreUpdate struct {
	Name     *string
	Metadata json.RawMessage
	// ExpiresAfterDays: nil keeps the policy, 0 removes it.
	ExpiresAfterDays *int
}

// VectorStoreStore keeps vector stores, their files, and the chunks of
// those files in a full-text (BM25) index with optional embeddings. A
// store that cannot keep them leaves the vector store operations
// answering 501.
type VectorStoreStore interface {
	// CreateVectorStore stores vs with files attached (status in_progress).
	CreateVectorStore(ctx context.Context, vs *VectorStore, files []VectorStoreFile) error
	GetVectorStore(ctx context.Context, owner, id string) (*VectorStore, error)
	ListVectorStores(ctx context.Context, owner string, q PageQuery) ([]VectorStore, bool, error)
	UpdateVectorStore(ctx context.Context, owner, id string, u StoreUpdate) (*VectorStore, error)
	// TouchVectorStore sets last_active_at.
	TouchVectorStore(ctx context.Context, owner, id string, at int64) error
	// DeleteVectorStore removes the store, its files and their chunks.
	DeleteVectorStore(ctx context.Context, owner, id string) error

	// AddVectorStoreFile attaches a file (status in_progress); when it is
	// attached already, the existing attachment is returned unchanged.
	AddVectorStoreFile(ctx context.Context, f *VectorStoreFile) (*VectorStoreFile, error)
	GetVectorStoreFile(ctx context.Context, owner, storeID, fileID string) (*VectorStoreFile, error)
	ListVectorStoreFiles(ctx context.Context, owner, storeID string, q PageQuery) ([]VectorStoreFile, bool, error)
	// CompletedVectorStoreFiles lists the files of a store whose index is
	// complete, for search.
	CompletedVectorStoreFiles(ctx context.Context, owner, storeID string) ([]VectorStoreFile, error)
	// DeleteVectorStoreFile detaches a file from a store and drops its chunks.
	DeleteVectorStoreFile(ctx context.Context, owner, storeID, fileID string) error
	// DetachFileEverywhere removes a (deleted) file from every store, with
	// its chunks, whether its ingestion has finished or not.
	DetachFileEverywhere(ctx context.Context, owner, fileID string) error
	// VectorStoreFileText returns the text extracted from an ingested file.
	VectorStoreFileText(ctx context.Context, owner, storeID, fileID string) (string, error)

	// ClaimIngestions leases to worker, until the Unix time until, up to
	// limit attachments in_progress whose lease has run out by now (or
	// was never taken, or was released), oldest first, so that several
	// instances never ingest one attachment at once.
	ClaimIngestions(ctx context.Context, worker string, now, until int64, limit int) ([]VectorStoreFile, error)
	// NextIngestionLease is NextBatchLease for ingestions in progress.
	NextIngestionLease(ctx context.Context, now int64) (int64, error)
	// RenewIngestion extends f's lease, held by f.LeaseOwner, until the
	// Unix time until; ErrIngestionLeaseLost when another worker took it
	// or the attachment is no longer in_progress.
	RenewIngestion(ctx context.Context, f *VectorStoreFile, until int64) error
	// ReleaseIngestion gives f's lease back, so that any worker can take
	// the attachment up at once.
	ReleaseIngestion(ctx context.Context, f *VectorStoreFile) error
	// CompleteIngestion stores the extracted text and chunks and marks the
	// attachment completed, in one transaction; it reports false (and
	// stores nothing) when the attachment is gone, no longer in_progress,
	// or leased to another worker than f.LeaseOwner, and ErrOverQuota
	// (storing nothing) when they would take the owner past f.Quota.
	CompleteIngestion(ctx context.Context, f *VectorStoreFile, text string, chunks []Chunk) (bool, error)
	// FailIngestion marks an in_progress attachment failed, when
	// f.LeaseOwner holds it.
	FailIngestion(ctx context.Context, f *VectorStoreFile, code, message string) error

	// SearchText ranks the chunks of the given files of a store that hold
	// any of the terms (runs of letters and digits) by the store's
	// full-text relevance (BM25 on SQLite, ts_rank_cd on PostgreSQL;
	// higher is better), best first, at most limit. fileIDs nil is every
	// file of the store (a store's chunks are those of its completed
	// files).
	SearchText(ctx context.Context, storeID string, fileIDs []string, terms []string, limit int) ([]ScoredChunk, error)
	// ChunkEmbeddings returns the store's chunks embedded with model whose
	// IDs are above afterID, at most limit, in ID order, with their file
	// IDs and vectors (texts are left empty): search's index reads a store
	// in pieces this way.
	ChunkEmbeddings(ctx context.Context, storeID, model string, afterID int64, limit int) ([]Chunk, error)
	// EmbeddedVectorStores lists the vector stores (IDs) with completed
	// files embedded, and each model they are embedded with: the indexes
	// search reads as the store opens.
	EmbeddedVectorStores(ctx context.Context) ([][2]string, error)
	// ChunkVectors returns the chunks of the given IDs that have an
	// embedding, with their file IDs and vectors, in any order: the exact
	// vectors search re-ranks its index's candidates by.
	ChunkVectors(ctx context.Context, ids []int64) ([]Chunk, error)
	// ChunksVersion changes whenever the set of the store's chunks
	// changes, so that embeddings kept in memory know when to reload.
	ChunksVersion(ctx context.Context, storeID string) (int64, error)
	// Chunks returns chunks by ID, with their texts, in the order asked.
	Chunks(ctx context.Context, ids []int64) ([]Chunk, error)
}

// NearestChunker is a store that ranks chunks by vector similarity
// itself (PostgreSQL with pgvector): search asks it for a vector store
// whose index does not fit in memory, instead of reading the store's
// vectors at each search (SQLite).
type NearestChunker interface {
	// NearestChunks ranks the chunks of the given files of a store
	// embedded with model by cosine similarity to the unit vector q, as
	// VectorList does: best first, scores clamped to 0..1, ties to the
	// lower chunk ID, at most limit; fileIDs nil is every file.
	NearestChunks(ctx context.Context, storeID, model string, fileIDs []string, q []float32, limit int) ([]ScoredChunk, error)
}

// VectorStoreSupport returns the store's vector store persistence, or
// why it has none: a store may keep them only where its database can
// (PostgreSQL with pgvector).
func VectorStoreSupport(s Store) (VectorStoreStore, string) {
	vs, ok := s.(VectorStoreStore)
	if !ok {
		return nil, "this local upstream's store does not keep vector stores; use the embedded SQLite store"
	}
	if o, ok := s.(interface{ vectorStoresOff() string }); ok && o.vectorStoresOff() != "" {
		return nil, o.vectorStoresOff()
	}
	return vs, ""
}

const SecondsPerDay = 86400

// Expired reports whether the store's expiry policy has run out.
func (v *VectorStore) Expired() bool {
	return v.ExpiresAfterDays > 0 && Now() >= v.LastActiveAt+int64(v.ExpiresAfterDays)*SecondsPerDay
}

func Normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
	return v
}
