// Package local is the upstream kind `local`: the built-in implementations
// of files, threads and vector stores (with ingestion and search) over a
// store (embedded SQLite by default).
package local

import (
	"errors"
	"fmt"
	"net/http"
	"path/filepath"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
)

func init() {
	caddy.RegisterModule(Local{})
}

// Local serves files and threads from a store.
type Local struct {
	// DataDir holds the SQLite database and the file contents; it is
	// created on first start. Placeholders are expanded.
	// Default: `<caddy data dir>/modelgate`.
	//
	// Caddyfile: `data_dir <path>`
	DataDir string `json:"data_dir,omitempty"`

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
	// (Vendor-Beta: spec, else openai). Default: auto.
	//
	// Caddyfile: `search_dialect spec|openai|auto`
	SearchDialect string `json:"search_dialect,omitempty"`

	store    Store
	vectors  *vectorState
	storeKey string
	logger   *zap.Logger
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

// pooledStore closes its store when the last config using it is gone,
// after stopping its ingestion.
type pooledStore struct {
	Store
	vectors *vectorState // nil when the store keeps no vector stores
}

func (p pooledStore) Destruct() error {
	if p.vectors != nil {
		p.vectors.ingest.stop()
	}
	return p.Close()
}

// Provision opens (or shares) the store.
func (l *Local) Provision(ctx caddy.Context) error {
	l.logger = ctx.Logger()
	switch l.SearchDialect {
	case "", dialectAuto, dialectSpec, dialectOpenAI:
	default:
		return fmt.Errorf("local upstream: search_dialect must be spec, openai or auto, got %q", l.SearchDialect)
	}
	dir := caddy.NewReplacer().ReplaceAll(l.DataDir, "")
	if dir == "" {
		dir = filepath.Join(caddy.AppDataDir(), "modelgate")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("local upstream: data_dir: %w", err)
	}
	l.storeKey = "sqlite:" + abs
	val, _, err := stores.LoadOrNew(l.storeKey, func() (caddy.Destructor, error) {
		s, err := openSQLite(abs)
		if err != nil {
			return nil, err
		}
		return pooledStore{Store: s, vectors: &vectorState{
			ingest: newIngester(s, s, l.logger.Named("ingest")),
			cache:  &vectorCache{entries: map[[2]string]*vectorMatrix{}},
		}}, nil
	})
	if err != nil {
		l.storeKey = ""
		return fmt.Errorf("local upstream: opening store in %s: %w", abs, err)
	}
	l.store, l.vectors = val.(pooledStore).Store, val.(pooledStore).vectors
	return nil
}

// UseDispatcher lets ingestion route embeddings through the gateway and
// starts it: files left in_progress by an earlier run are taken up.
func (l *Local) UseDispatcher(d upstreams.Dispatcher) {
	if l.vectors != nil {
		l.vectors.ingest.use(d)
	}
}

// Cleanup releases this config's use of the store.
func (l *Local) Cleanup() error {
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
	return h(l, w, c)
}

// notFoundOr turns ErrNotFound into the public 404 for the object kind.
func notFoundOr(err error, kind, id string) error {
	if errors.Is(err, ErrNotFound) {
		return upstreams.NotFound("No %s found with id '%s'.", kind, id)
	}
	return err
}

// UnmarshalCaddyfile reads the upstream's block:
//
//	upstream <name> local {
//	    data_dir <path>
//	    embedding_model <model>
//	    search_dialect spec|openai|auto
//	}
func (l *Local) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the upstream's name or type
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "data_dir":
			if !d.AllArgs(&l.DataDir) {
				return d.ArgErr()
			}
		case "embedding_model":
			if !d.AllArgs(&l.EmbeddingModel) {
				return d.ArgErr()
			}
		case "search_dialect":
			if !d.AllArgs(&l.SearchDialect) {
				return d.ArgErr()
			}
		default:
			return d.Errf("unrecognized local upstream option %q", d.Val())
		}
	}
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner         = (*Local)(nil)
	_ caddy.CleanerUpper        = (*Local)(nil)
	_ caddyfile.Unmarshaler     = (*Local)(nil)
	_ upstreams.Upstream        = (*Local)(nil)
	_ upstreams.OperationServer = (*Local)(nil)
	_ upstreams.DispatcherUser  = (*Local)(nil)
)
