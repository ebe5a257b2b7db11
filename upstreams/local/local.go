// Package local is the upstream kind `local`: the built-in implementations
// of files, threads, responses, conversations, vector stores (with
// ingestion and search) and batches over a store: embedded SQLite by
// default; PostgreSQL for several instances keeps files, threads,
// responses, conversations, batches and (with pgvector) vector stores.
//
// This package is the HTTP adapter the gateway (module/) talks to: the
// Caddy module and its configuration, one handler per operation (reading
// the call, checking the objects it references belong to the caller,
// writing the public objects and lists), and the background work it owns
// for its config. What it serves from sits below it, dependencies
// pointing down: package store (the SQL layer and its two dialects),
// package batches (validating and running batches) and package
// vectorstores (ingestion, extraction, chunking, embeddings and search),
// the last two on top of store.
package local

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/batches"
	"github.com/modelgate/modelgate/upstreams/local/store"
	"github.com/modelgate/modelgate/upstreams/local/vectorstores"
)

func init() {
	caddy.RegisterModule(Local{})
}

// Local is the upstream kind `local`: its configuration (the Caddyfile
// block is read in caddyfile.go), the store it serves from and the work it
// runs on that store for its config.
type Local struct {
	// DataDir holds the SQLite database and the file contents; it is
	// created on first start. Placeholders are expanded.
	// Default: `<caddy data dir>/modelgate`.
	//
	// Caddyfile: `data_dir <path>`
	DataDir string `json:"data_dir,omitempty"`

	// BatchConcurrency is how many requests of one batch are in flight at
	// once. Default: 8.
	//
	// Caddyfile: `batch_concurrency <n>`
	BatchConcurrency int `json:"batch_concurrency,omitempty"`

	// MaxBatches is how many batches this instance runs at once.
	// Default: 2.
	//
	// Caddyfile: `max_batches <n>`
	MaxBatches int `json:"max_batches,omitempty"`

	// MaxIngestions is how many files this instance ingests into vector
	// stores at once. Default: 2.
	//
	// Caddyfile: `max_ingestions <n>`
	MaxIngestions int `json:"max_ingestions,omitempty"`

	// BatchLease is how long a worker holds a batch without renewing its
	// lease; a batch whose worker died is resumed by another (or by the
	// restarted process) once its lease has run out. Default: 30s.
	//
	// Caddyfile: `batch_lease <duration>`
	BatchLease caddy.Duration `json:"batch_lease,omitempty"`

	// MaxAttempts is how many times a batch request or a file's ingestion
	// is started before it is quarantined: the attempt is recorded before
	// the work runs, so work that crashed the process (or held its worker
	// until its lease ran out) that many times ends failed, with an error
	// line in the batch's error file or the file's last_error, and is
	// never run again; the rest goes on. Default: 2 (one retry).
	//
	// Caddyfile: `max_attempts <n>`
	MaxAttempts int `json:"max_attempts,omitempty"`

	// FileSweepInterval is how often files past their expires_at (set by
	// expires_after at upload, or a batch's output_expires_after) are
	// deleted, contents and rows; from expires_at on they are gone for
	// clients already (404, not listed). Default: 1m.
	//
	// Caddyfile: `file_sweep_interval <duration>`
	FileSweepInterval caddy.Duration `json:"file_sweep_interval,omitempty"`

	// BusyTimeout is how long a write to the SQLite store waits for
	// the gateway's other writers (they take turns in the order they
	// came), and as long again for another process's, before the call is
	// answered 503 store_busy with Retry-After (configs sharing a
	// data_dir share the first one's).
	// Default: 10s.
	//
	// Caddyfile: `busy_timeout <duration>`
	BusyTimeout caddy.Duration `json:"busy_timeout,omitempty"`

	// ProviderObjectRetention is how long the gateway remembers which
	// owner created an object a provider keeps for it (a response, file,
	// vector store, batch, conversation or thread served by an openai
	// upstream): afterwards the row is forgotten by the file sweeper and
	// the object answers 404 through the gateway to every key. Default:
	// 720h (30 days, the time a provider keeps a response).
	//
	// Caddyfile: `provider_object_retention <duration>`
	ProviderObjectRetention caddy.Duration `json:"provider_object_retention,omitempty"`

	// Postgres, when set, keeps everything (file contents included) in the
	// PostgreSQL database this connection string names instead, so that
	// several instances share one store; data_dir is then not used. A URL
	// (postgres://user:password@host:5432/db?sslmode=disable) or key=value
	// pairs, which may also set the pool (pool_max_conns; default
	// 3 x max_batches + 2 x max_ingestions + 8, see store.PoolSize) and
	// the schema (search_path). Placeholders are expanded, so the password
	// can come from the environment. Tables are created or migrated at
	// start. Default: empty (SQLite in data_dir).
	//
	// Caddyfile: `postgres <dsn>`, e.g. `postgres {env.MODELGATE_POSTGRES_DSN}`
	Postgres string `json:"postgres,omitempty"`

	// PoolWait bounds how long a call to the PostgreSQL store waits for a
	// free connection of its pool; one that waits longer answers 503
	// store_busy (Retry-After: 1). Default: 5s.
	//
	// Caddyfile: `pool_wait <duration>`
	PoolWait caddy.Duration `json:"pool_wait,omitempty"`

	// EmbeddingModel, when set, has files attached to vector stores
	// embedded with this model through the gateway's embeddings.create
	// route (on the attaching key's behalf), and searches rank by BM25
	// and cosine similarity fused. Unset, the index is BM25 only.
	// Default: unset.
	//
	// Caddyfile: `embedding_model <model>`
	EmbeddingModel string `json:"embedding_model,omitempty"`

	// SearchDialect is the shape of vector store search responses: `spec`
	// (object list, string content, metadata), `openai` (the public
	// API's results page) or `auto`, by the beta header the client sent
	// (Vendor-Beta alone: spec; with OpenAI-Beta, or OpenAI-Beta alone:
	// openai). Default: auto.
	//
	// Caddyfile: `search_dialect spec|openai|auto`
	SearchDialect string `json:"search_dialect,omitempty"`

	// StorageQuota bounds the bytes of files (uploads and batch outputs)
	// one owner keeps, in bytes; negative: no quota. An upload that would
	// pass it is refused with 429 insufficient_quota (param `file`) as it
	// streams, before it is written past the quota; a batch's outputs are
	// bounded by what is left of it when the batch starts. Per owner, not
	// per key: files belong to the owner, every key of which sees them,
	// so the keys of one owner share one quota. Default: 10 GiB.
	//
	// Caddyfile: `storage_quota <size>|off`
	StorageQuota int64 `json:"storage_quota,omitempty"`

	// MaxBatchOutput bounds the output of one batch (its output and error
	// files together), in bytes; negative: no bound. A request whose
	// result would pass it gets an error line (output_too_large) in its
	// place. Default: 1 GiB.
	//
	// Caddyfile: `max_batch_output <size>|off`
	MaxBatchOutput int64 `json:"max_batch_output,omitempty"`

	// MaxQueuedBatches bounds the batches one key has validating or in
	// progress; creating one more is refused with 429
	// insufficient_quota. Negative: no bound. Default: 100.
	//
	// Caddyfile: `max_queued_batches <n>|off`
	MaxQueuedBatches int `json:"max_queued_batches,omitempty"`

	// MaxQueuedLines bounds the lines not yet run of the batches one key
	// has validating or in progress; a batch whose input file would pass
	// it is refused at create with 429 insufficient_quota (param
	// input_file_id). Negative: no bound. Default: 1,000,000.
	//
	// Caddyfile: `max_queued_lines <n>|off`
	MaxQueuedLines int64 `json:"max_queued_lines,omitempty"`

	// DiskReserve is the size of a file kept in data_dir (SQLite only) so
	// that deletes work on a full disk: a delete refused for want of space
	// releases it and runs again, and other writes answer 507 until it is
	// back. Negative: none. Default: 16 MiB.
	//
	// Caddyfile: `disk_reserve <size>|off`
	DiskReserve int64 `json:"disk_reserve,omitempty"`

	// SearchIndexMemory bounds the memory the vector stores' search
	// indexes hold together, per instance (each vector store's
	// embeddings kept quantised, about 280 bytes a chunk at 256
	// dimensions, and its chunk texts as an inverted index for BM25);
	// past it the least recently searched are dropped, and a vector
	// store whose index alone would not fit is ranked by the database
	// (SQLite: its vectors read at each search and FTS5; PostgreSQL:
	// pgvector and ts_rank_cd). Negative: no index kept. Default: 1 GiB.
	// The configs sharing a store share its indexes under the first
	// one's bound.
	//
	// Caddyfile: `search_index_memory <size>|off`
	SearchIndexMemory int64 `json:"search_index_memory,omitempty"`

	store store.Store
	// dispatcher routes this config's work through its gateway.
	dispatcher upstreams.Dispatcher
	// batches holds the runner between StartWork and StopWork; requests
	// read it to wake or cancel it.
	batches *atomic.Pointer[batches.Runner]
	// sweeper deletes expired files between StartWork and StopWork.
	sweeper *fileSweeper
	// largeTurns holds the turn of the one large response being made
	// (see largeTurn).
	largeTurns chan struct{}
	vectors    *vectorstores.Vectors
	storeKey   string
	logger     *zap.Logger
	// opening opens the store at start, or on the first call served
	// before (ensureOpen); set by Provision.
	opening *storeOpening
	// late is the opening of a store that could not be reached when it
	// was first opened (see openLater); nil when it opened then.
	late *lateOpen
	// events emits the batch and ingestion events (events.go).
	events *upstreams.Events
}

// CaddyModule returns the Caddy module information.
func (Local) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  upstreams.Namespace + ".local",
		New: func() caddy.Module { return new(Local) },
	}
}

// stores are shared across config reloads by location, so a reload never
// closes the database under in-flight requests of the previous config.
var stores = caddy.NewUsagePool()

// pooledStore closes its store when the last config using it is gone.
// The embeddings cached for search are shared with it; the work on the
// store (batches, ingestion) belongs to each config.
type pooledStore struct {
	store.Store
	vectors store.VectorStoreStore // nil when the store keeps no vector stores
	cache   *vectorstores.Cache
}

func (p pooledStore) Destruct() error { return p.Close() }

// Provision checks the configuration and says where the store is; it
// opens nothing (see ensureOpen), so `caddy validate` creates no file.
func (l *Local) Provision(ctx caddy.Context) error {
	l.logger = ctx.Logger()
	var err error
	if l.events, err = upstreams.LoadEvents(ctx); err != nil {
		return fmt.Errorf("local upstream: %w", err)
	}
	l.batches = new(atomic.Pointer[batches.Runner])
	if l.BatchConcurrency == 0 {
		l.BatchConcurrency = 8
	}
	if l.MaxBatches == 0 {
		l.MaxBatches = 2
	}
	if l.MaxIngestions == 0 {
		l.MaxIngestions = 2
	}
	if l.BatchLease == 0 {
		l.BatchLease = caddy.Duration(30 * time.Second)
	}
	if l.MaxAttempts == 0 {
		l.MaxAttempts = 2
	}
	if l.FileSweepInterval == 0 {
		l.FileSweepInterval = caddy.Duration(defaultFileSweep)
	}
	if l.PoolWait == 0 {
		l.PoolWait = caddy.Duration(defaultPoolWait)
	}
	if l.PoolWait < 0 {
		return fmt.Errorf("local upstream: pool_wait must be positive, got %v", time.Duration(l.PoolWait))
	}
	l.provisionLimits()
	l.largeTurns = make(chan struct{}, 1)
	if l.BusyTimeout == 0 {
		l.BusyTimeout = caddy.Duration(store.DefaultBusyTimeout)
	}
	if l.BusyTimeout < 0 {
		return fmt.Errorf("local upstream: busy_timeout must be positive, got %v", time.Duration(l.BusyTimeout))
	}
	if l.ProviderObjectRetention == 0 {
		l.ProviderObjectRetention = caddy.Duration(defaultProviderObjectRetention)
	}
	if l.ProviderObjectRetention < 0 {
		return fmt.Errorf("local upstream: provider_object_retention must be positive, got %v", time.Duration(l.ProviderObjectRetention))
	}
	if l.FileSweepInterval < 0 {
		return fmt.Errorf("local upstream: file_sweep_interval must be positive, got %v", time.Duration(l.FileSweepInterval))
	}
	if l.MaxAttempts < 0 {
		return fmt.Errorf("local upstream: max_attempts must be positive, got %d", l.MaxAttempts)
	}
	if l.BatchConcurrency < 0 || l.BatchLease < caddy.Duration(time.Second) {
		return fmt.Errorf("local upstream: batch_concurrency must be positive and batch_lease at least 1s")
	}
	if l.MaxBatches < 0 || l.MaxIngestions < 0 {
		return fmt.Errorf("local upstream: max_batches and max_ingestions must be positive")
	}
	switch l.SearchDialect {
	case "", dialectAuto, dialectSpec, dialectOpenAI:
	default:
		return fmt.Errorf("local upstream: search_dialect must be spec, openai or auto, got %q", l.SearchDialect)
	}
	repl := caddy.NewReplacer()
	if l.Postgres != "" {
		if l.DataDir != "" {
			return errors.New("local upstream: data_dir and postgres exclude each other: the PostgreSQL store keeps file contents in the database")
		}
		dsn := repl.ReplaceAll(l.Postgres, "")
		if err := store.CheckPostgresDSN(dsn); err != nil {
			return fmt.Errorf("local upstream: %w", err)
		}
		// The key tells databases apart without keeping the password in it.
		sum := sha256.Sum256([]byte(dsn))
		key := "postgres:" + hex.EncodeToString(sum[:])
		l.opening = &storeOpening{key: key, open: func() (store.Store, string, error) {
			s, err := store.OpenPostgres(ctx, dsn, store.PoolOptions{MaxConns: store.PoolSize(l.MaxBatches, l.MaxIngestions), Wait: time.Duration(l.PoolWait)})
			if err != nil {
				return nil, "", fmt.Errorf("local upstream: opening the PostgreSQL store: %w", err)
			}
			s.WarnOfClockSkew(ctx, time.Now, l.logger)
			return s, "postgres://" + s.Location, nil
		}}
		return nil
	}
	dir := repl.ReplaceAll(l.DataDir, "")
	if dir == "" {
		dir = filepath.Join(caddy.AppDataDir(), "modelgate")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("local upstream: data_dir: %w", err)
	}
	l.opening = &storeOpening{key: "sqlite:" + abs, open: func() (store.Store, string, error) {
		s, err := store.OpenSQLiteWaiting(abs, time.Duration(l.BusyTimeout))
		if err != nil {
			return nil, "", fmt.Errorf("local upstream: opening store in %s: %w", abs, err)
		}
		return s, abs, nil
	}}
	return nil
}

// valueAllower is a store that bounds what its database server may send
// by the largest value it is given to keep (PostgreSQL; see
// store.Postgres.AllowValues): each config sharing it allows its
// gateway's max_body_size.
type valueAllower interface {
	AllowValues(maxValue int64)
}

// share takes the store pooled under key, opening it when no config
// holds it yet.
func (l *Local) share(key string, open func() (store.Store, string, error)) error {
	val, _, err := stores.LoadOrNew(key, func() (caddy.Destructor, error) {
		s, where, err := open()
		if err != nil {
			return nil, err
		}
		l.logger.Info("local store opened", zap.String("store", where))
		p := pooledStore{Store: s}
		vs, why := store.VectorStoreSupport(s)
		if vs == nil {
			l.logger.Warn("vector stores are off", zap.String("store", where), zap.String("reason", why))
		} else {
			p.vectors, p.cache = vs, vectorstores.NewCache(l.SearchIndexMemory)
		}
		return p, nil
	})
	if err != nil {
		return err
	}
	l.storeKey = key
	p := val.(pooledStore)
	l.store = p.Store
	if r, ok := l.store.(reserver); ok {
		r.KeepReserve(max(l.DiskReserve, 0))
	}
	if a, ok := l.store.(valueAllower); ok && l.dispatcher != nil {
		a.AllowValues(l.dispatcher.BodyLimit())
	}
	if p.vectors != nil {
		l.vectors = &vectorstores.Vectors{Model: l.EmbeddingModel, Ingest: vectorstores.NewIngester(p.vectors, p.Store, l.logger.Named("ingest"), l.MaxIngestions, l.MaxAttempts), Cache: p.cache}
		l.vectors.Ingest.Ended = l.ingestionEnded
		l.vectors.Ingest.Index = p.cache
	}
	return nil
}

// UseDispatcher has this config's batches and embeddings (ingestion's and
// search's) routed through d, its gateway. It starts nothing.
func (l *Local) UseDispatcher(d upstreams.Dispatcher) {
	l.dispatcher = d
	if l.opened() && l.vectors != nil {
		l.vectors.Ingest.Use(d)
	}
}

// StartWork starts this config's background work on the store: the batch
// runner, the file sweeper and ingestion, which take up what an earlier run left open.
// Configs sharing a store (one being replaced by the next, say) work on
// it side by side under their leases.
func (l *Local) StartWork() error {
	if l.dispatcher == nil {
		return errors.New("local upstream: no gateway to send work through")
	}
	if err := l.ensureOpen(); err != nil {
		return err
	}
	if late := l.lateOpening(); late != nil {
		late.mu.Lock()
		defer late.mu.Unlock()
		late.work = true
		if !l.opened() {
			return nil // started once the store is open
		}
	}
	l.startWork()
	return nil
}

// startWork starts the runner, the sweeper and ingestion on the open store.
func (l *Local) startWork() {
	r := batches.NewRunner(l.store, l.store, l.dispatcher, l.logger.Named("batches"), time.Duration(l.BatchLease), l.BatchConcurrency, l.MaxBatches, l.MaxAttempts)
	r.MaxOutput, r.StorageQuota = max(l.MaxBatchOutput, 0), max(l.StorageQuota, 0)
	if space, ok := l.store.(reserver); ok {
		r.Room = space.RoomFor
	}
	r.Ended = l.batchEnded
	r.Start()
	l.batches.Store(r)
	l.sweeper = startFileSweeper(l.store, time.Duration(l.FileSweepInterval), time.Duration(l.ProviderObjectRetention), l.logger.Named("files"))
	if l.vectors != nil {
		l.vectors.Ingest.StorageQuota = max(l.StorageQuota, 0)
		l.vectors.Ingest.Start()
	}
}

// StopWork stops the batch runner, the file sweeper and ingestion and
// waits for them.
func (l *Local) StopWork() {
	if late := l.lateOpening(); late != nil {
		late.mu.Lock()
		defer late.mu.Unlock()
		late.work = false
	}
	l.sweeper.Stop()
	l.sweeper = nil
	if l.batches != nil {
		l.batches.Swap(nil).Stop()
	}
	if l.opened() && l.vectors != nil {
		l.vectors.Ingest.Stop()
	}
}

// Cleanup stops any work still running and releases this config's use of
// the store.
func (l *Local) Cleanup() error {
	l.stopOpening()
	l.StopWork()
	if l.storeKey == "" {
		return nil
	}
	_, err := stores.Delete(l.storeKey)
	l.storeKey = ""
	return err
}

// handlers maps each operation the local upstream implements to its handler.
var handlers = map[string]func(*Local, http.ResponseWriter, *upstreams.Call) error{
	upstreams.OpFilesCreate:     (*Local).createFile,
	upstreams.OpFilesList:       (*Local).listFiles,
	upstreams.OpFilesRetrieve:   (*Local).retrieveFile,
	upstreams.OpFilesDelete:     (*Local).deleteFile,
	upstreams.OpFilesContent:    (*Local).fileContent,
	upstreams.OpThreadsCreate:   (*Local).createThread,
	upstreams.OpThreadsRetrieve: (*Local).retrieveThread,
	upstreams.OpThreadsUpdate:   (*Local).updateThread,
	upstreams.OpThreadsDelete:   (*Local).deleteThread,
	upstreams.OpBatchesCreate:   (*Local).createBatch,
	upstreams.OpBatchesRetrieve: (*Local).retrieveBatch,
	upstreams.OpBatchesList:     (*Local).listBatches,
	upstreams.OpBatchesCancel:   (*Local).cancelBatch,

	upstreams.OpResponsesCreate:     (*Local).createResponse,
	upstreams.OpResponsesRetrieve:   (*Local).retrieveResponse,
	upstreams.OpResponsesDelete:     (*Local).deleteResponse,
	upstreams.OpResponsesInputItems: (*Local).listResponseItems,

	upstreams.OpConversationsCreate:       (*Local).createConversation,
	upstreams.OpConversationsRetrieve:     (*Local).retrieveConversation,
	upstreams.OpConversationsUpdate:       (*Local).updateConversation,
	upstreams.OpConversationsDelete:       (*Local).deleteConversation,
	upstreams.OpConversationItemsCreate:   (*Local).createConversationItems,
	upstreams.OpConversationItemsList:     (*Local).listConversationItems,
	upstreams.OpConversationItemsRetrieve: (*Local).retrieveConversationItem,
	upstreams.OpConversationItemsDelete:   (*Local).deleteConversationItem,

	upstreams.OpVectorStoresCreate:       vectorStoreHandler((*Local).createVectorStore),
	upstreams.OpVectorStoresList:         vectorStoreHandler((*Local).listVectorStores),
	upstreams.OpVectorStoresRetrieve:     vectorStoreHandler((*Local).retrieveVectorStore),
	upstreams.OpVectorStoresUpdate:       vectorStoreHandler((*Local).updateVectorStore),
	upstreams.OpVectorStoresDelete:       vectorStoreHandler((*Local).deleteVectorStore),
	upstreams.OpVectorStoresSearch:       vectorStoreHandler((*Local).searchVectorStore),
	upstreams.OpVectorStoreFilesCreate:   vectorStoreHandler((*Local).createVectorStoreFile),
	upstreams.OpVectorStoreFilesList:     vectorStoreHandler((*Local).listVectorStoreFiles),
	upstreams.OpVectorStoreFilesRetrieve: vectorStoreHandler((*Local).retrieveVectorStoreFile),
	upstreams.OpVectorStoreFilesDelete:   vectorStoreHandler((*Local).deleteVectorStoreFile),
	upstreams.OpVectorStoreFilesContent:  vectorStoreHandler((*Local).vectorStoreFileContent),
}

// Serves reports whether the operation is implemented locally.
func (l *Local) Serves(op string) bool { _, ok := handlers[op]; return ok }

// ServeCall runs the operation's handler.
func (l *Local) ServeCall(w http.ResponseWriter, c *upstreams.Call) error {
	h, ok := handlers[c.Operation]
	if !ok {
		return &upstreams.Error{Status: http.StatusNotImplemented, Type: upstreams.TypeNotImplemented,
			Message: fmt.Sprintf("The local upstream does not implement %s.", c.Operation)}
	}
	if err := l.ensureOpen(); err != nil {
		l.logger.Error("opening the store", zap.Error(err))
	}
	if !l.opened() {
		w.Header().Set("Retry-After", "1")
		return errStoreUnavailable
	}
	return l.outage(w, c, l.serveSpace(w, c, h))
}

// notFoundOr turns ErrNotFound into the public 404 for the object kind.
func notFoundOr(err error, kind, id string) error {
	if errors.Is(err, store.ErrNotFound) {
		return upstreams.NotFound("No %s found with id '%s'.", kind, id)
	}
	return err
}

// Interface guards
var (
	_ caddy.Provisioner         = (*Local)(nil)
	_ caddy.CleanerUpper        = (*Local)(nil)
	_ caddyfile.Unmarshaler     = (*Local)(nil)
	_ upstreams.Upstream        = (*Local)(nil)
	_ upstreams.OperationServer = (*Local)(nil)
	_ upstreams.Worker          = (*Local)(nil)
)

// GatewayStore is the store the gateway keeps its issued keys and spend
// in: this upstream's, once it is open.
func (l *Local) GatewayStore() (store.GatewayStore, error) {
	if !l.opened() {
		return nil, errNotOpened
	}
	gs, ok := l.store.(store.GatewayStore)
	if !ok {
		return nil, fmt.Errorf("the store %T keeps no gateway keys", l.store)
	}
	return gs, nil
}
