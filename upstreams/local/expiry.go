package local

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// defaultFileSweep is how often expired files are deleted by default.
const defaultFileSweep = time.Minute

// sweepPage is how many expired files one query of a sweep takes.
const sweepPage = 100

// fileSweeper deletes the files past their expires_at (contents, rows and
// vector store chunks), forgets the owners of provider objects older
// than the retention and removes abandoned responses (what a crash left
// of a response being stored or deleted), in the background, at once and then every
// interval, between StartWork and StopWork. Before it passes, an expired
// file is already gone for every reader (the store's GetFile and ListFiles
// see no expired file).
type fileSweeper struct {
	store    store.Store
	interval time.Duration
	// retention is provider_object_retention.
	retention time.Duration
	logger    *zap.Logger
	stop      context.CancelFunc
	done      chan struct{}
}

func startFileSweeper(s store.Store, interval, retention time.Duration, logger *zap.Logger) *fileSweeper {
	ctx, cancel := context.WithCancel(context.Background())
	fs := &fileSweeper{store: s, interval: interval, retention: retention, logger: logger, stop: cancel, done: make(chan struct{})}
	go fs.loop(ctx)
	return fs
}

func (fs *fileSweeper) loop(ctx context.Context) {
	defer close(fs.done)
	tick := time.NewTicker(fs.interval)
	defer tick.Stop()
	for {
		if _, err := sweepExpiredFiles(ctx, fs.store); err != nil && ctx.Err() == nil {
			fs.logger.Warn("deleting expired files", zap.Error(err))
		}
		if err := forgetOldProviderObjects(ctx, fs.store, fs.retention); err != nil && ctx.Err() == nil {
			fs.logger.Warn("forgetting old provider objects", zap.Error(err))
		}
		if _, err := fs.store.RemoveAbandonedResponses(ctx); err != nil && ctx.Err() == nil {
			fs.logger.Warn("removing abandoned responses", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Stop ends the sweeper and waits for it; nil does nothing.
func (fs *fileSweeper) Stop() {
	if fs == nil {
		return
	}
	fs.stop()
	<-fs.done
}

// sweepExpiredFiles deletes every file expired by store.Now() and reports
// how many it deleted. A file deleted meanwhile by its owner (or by another
// instance's sweeper) is passed over.
func sweepExpiredFiles(ctx context.Context, s store.Store) (int, error) {
	deleted := 0
	for {
		files, err := s.ExpiredFiles(ctx, store.Now(), sweepPage)
		if err != nil || len(files) == 0 {
			return deleted, err
		}
		for _, f := range files {
			if err := removeFile(ctx, s, f.Owner, f.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
				return deleted, err
			}
			deleted++
		}
		if len(files) < sweepPage {
			return deleted, nil
		}
	}
}
