package store

import (
	"io"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgproto3"
)

// The driver reads each message of the server whole into memory, sized
// by the length the message announces, before it looks at its type: a
// hostile or broken server announcing a huge message makes each
// connection of the pool reserve that much. The store's connections
// refuse a message past the largest a correct server sends the store.
//
// That is one row with one large value in it: the store reads file
// contents a chunk (chunkSize) at a time and items, batch requests and
// chunks of vector stores in groups of rows, one message each, but some
// values whole: a vector store file's text (at most MaxDocumentText), a
// batch request's body or result, a response item or a thread message
// (each at most the gateway's max_body_size, see AllowValues) and a
// response object (the fields of its request and its output: at most
// twice that).

// MaxDocumentText is the most text the store keeps of one vector store
// file (read whole by VectorStoreFileText): what extracting one document
// may yield.
const MaxDocumentText = 64 << 20

// rowOverhead bounds what a row holds besides its one large value: its
// other columns (IDs, times, states, small JSON) with the message's
// framing.
const rowOverhead = 64 << 10

// pgLargeMessageLimit is PostgreSQL's own bound on a message
// (PG_LARGE_MESSAGE_LIMIT) and the driver's default: the store never
// accepts more.
const pgLargeMessageLimit = 0x3fffffff - 1

// maxMessageBody is the largest message body a correct server sends the
// store when no value kept (MaxDocumentText aside) is longer than
// maxValue bytes: a response object of twice that, with the rest of its
// row.
func maxMessageBody(maxValue int64) int64 {
	v := min(max(maxValue, MaxDocumentText), pgLargeMessageLimit)
	return min(2*v+rowOverhead, pgLargeMessageLimit)
}

// messageBound is the largest message body the store's connections
// accept; it only grows (AllowValues), so a value stored under a larger
// bound is still read.
type messageBound struct{ n atomic.Int64 }

func newMessageBound() *messageBound {
	b := &messageBound{}
	b.n.Store(maxMessageBody(0))
	return b
}

// frontend reads the server's messages of a new connection (the pool's
// and the announcements' watch), refusing one past the bound with
// pgproto3.ExceededMaxBodyLenErr before reading or reserving its body.
func (b *messageBound) frontend(r io.Reader, w io.Writer) *pgproto3.Frontend {
	f := pgproto3.NewFrontend(r, w)
	f.SetMaxBodyLen(int(b.n.Load()))
	return f
}

// raise makes the bound maxMessageBody(maxValue) if that is larger, and
// reports whether it did.
func (b *messageBound) raise(maxValue int64) bool {
	want := maxMessageBody(maxValue)
	for {
		old := b.n.Load()
		if want <= old {
			return false
		}
		if b.n.CompareAndSwap(old, want) {
			return true
		}
	}
}

// AllowValues has the store read values of up to maxValue bytes (the
// gateway's max_body_size of a config using it): when that raises the
// bound on the server's messages, the pool's connections are made again
// under it (those in use once they are given back).
func (s *Postgres) AllowValues(maxValue int64) {
	if s.bound.raise(maxValue) {
		s.pool.Reset()
	}
}

// MaxMessageBody is the largest message body the store's connections
// accept from the server now.
func (s *Postgres) MaxMessageBody() int64 { return s.bound.n.Load() }
