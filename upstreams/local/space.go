package local

import (
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// errInsufficientStorage is the answer to a write the disk has no room
// for: 507, with a message saying how to free space.
var errInsufficientStorage = &upstreams.Error{Status: http.StatusInsufficientStorage, Type: upstreams.TypeServer, Code: "insufficient_storage",
	Message: "The gateway's store is out of disk space, so nothing can be written. Deleting files, vector stores, responses or conversation items frees space and works on a full disk."}

// reserver is a store that keeps a disk reserve for deletes (SQLite; see
// store.SQLite.KeepReserve).
type reserver interface {
	KeepReserve(size int64)
	ReleaseReserve() bool
	RoomToWrite() bool
	RoomFor(n int64) bool
}

// isDelete reports whether the operation deletes: what frees space.
func isDelete(op string) bool { return strings.HasSuffix(op, ".delete") }

// serveSpace runs h within the disk's means: a write other than a delete
// needs the reserve in place and as much again free (507 otherwise: the
// space it would take is what deletes need); a delete refused for want of
// space releases the reserve and runs once more.
func (l *Local) serveSpace(w http.ResponseWriter, c *upstreams.Call, h func(*Local, http.ResponseWriter, *upstreams.Call) error) error {
	r, ok := l.store.(reserver)
	if !ok {
		return h(l, w, c)
	}
	if !isDelete(c.Operation) {
		if c.Request.Method != http.MethodGet && c.Operation != upstreams.OpVectorStoresSearch && !r.RoomToWrite() {
			return errInsufficientStorage
		}
		return h(l, w, c)
	}
	err := h(l, w, c)
	if store.DiskFull(err) && r.ReleaseReserve() {
		l.logger.Warn("disk full: the reserve was released for a delete", zap.String("operation", c.Operation))
		err = h(l, w, c)
	}
	return err
}
