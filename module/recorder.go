package modelgate

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/modelgate/modelgate/record"
)

// RecorderConfig records exchanges to JSONL files for the conformance
// tools (`conformance check` and `replay`).
//
// Caddyfile:
//
//	record <path> {
//	    max_size <size>
//	    max_files <n>
//	    sample <fraction>
//	    max_body <size>
//	    queue <n>
//	    queue_bytes <size>
//	}
type RecorderConfig struct {
	// Path of the JSONL file. Required. Rotated files get .1, .2, ...
	Path string `json:"path"`
	// MaxSize rotates the file when it grows past this many bytes.
	// Default: 100 MiB.
	MaxSize int64 `json:"max_size,omitempty"`
	// MaxFiles is how many rotated files are kept. Default: 5.
	MaxFiles int `json:"max_files,omitempty"`
	// Sample is the fraction of exchanges recorded, in (0,1]. Default: 1.
	Sample float64 `json:"sample,omitempty"`
	// MaxBody caps each recorded request and response body (and the sum of
	// a stream's events) in bytes; longer ones are cut and marked.
	// Default: 64 KiB.
	MaxBody int `json:"max_body,omitempty"`
	// Queue is how many records may wait for the writer, which writes
	// those of each 5 ms at once; when it is full records are dropped (and
	// counted) rather than delaying a request.
	// Default: 4096.
	Queue int `json:"queue,omitempty"`
	// QueueBytes bounds what the records waiting for the writer hold, in
	// bytes: their bodies, events and headers (see heldBytes). A record
	// that would take them past it is dropped (and counted), as when the
	// queue is full. Default: 64 MiB.
	QueueBytes int64 `json:"queue_bytes,omitempty"`
}

func (c *RecorderConfig) setDefaults() {
	if c.MaxSize == 0 {
		c.MaxSize = 100 << 20
	}
	if c.MaxFiles == 0 {
		c.MaxFiles = 5
	}
	if c.Sample == 0 {
		c.Sample = 1
	}
	if c.MaxBody == 0 {
		c.MaxBody = 64 << 10
	}
	if c.Queue == 0 {
		c.Queue = 4096
	}
	if c.QueueBytes == 0 {
		c.QueueBytes = 64 << 20
	}
}

func (c *RecorderConfig) validate() error {
	switch {
	case c.Path == "":
		return fmt.Errorf("record: a path is required")
	case c.Sample <= 0 || c.Sample > 1:
		return fmt.Errorf("record: sample must be in (0,1], got %v", c.Sample)
	case c.MaxSize < 1024:
		return fmt.Errorf("record: max_size must be at least 1KiB")
	case c.MaxFiles < 1 || c.MaxBody < 1 || c.Queue < 1 || c.QueueBytes < 1:
		return fmt.Errorf("record: max_files, max_body, queue and queue_bytes must be positive")
	}
	return nil
}

// recorders are shared by path across config reloads, so an old config's
// in-flight requests and the new config write through one writer.
var recorders = caddy.NewUsagePool()

var recorderDropped = prometheus.NewCounter(prometheus.CounterOpts{
	Namespace: "caddy", Subsystem: "modelgate", Name: "recorder_dropped_total",
	Help: "Exchanges not recorded because the recorder's queue was full (in records or in bytes) or closed.",
})

// recorder writes records from a bounded queue on its own goroutine. The
// file is opened on the first record, not at provision, because Caddy
// provisions configs it only validates.
type recorder struct {
	cfg    RecorderConfig
	logger *zap.Logger
	queue  chan *record.Record
	// kick wakes the writer: batchWindow after the first record of a
	// batch is queued (armed until the writer takes the batch: the batch's
	// timer, reset by that record, is the one timer made with the
	// recorder, so that arming it allocates nothing), and once more when
	// the queue is closed.
	kick   chan struct{}
	armed  atomic.Bool
	timer  *time.Timer
	mu     sync.RWMutex // guards closed against sends on a closed queue
	closed bool
	done   chan struct{}
	start  sync.Once
	size   atomic.Int64
	// queued is what the records in the queue hold (heldBytes).
	queued atomic.Int64
}

func loadRecorder(cfg RecorderConfig, logger *zap.Logger) (*recorder, error) {
	val, _, err := recorders.LoadOrNew(cfg.Path, func() (caddy.Destructor, error) {
		rec := &recorder{cfg: cfg, logger: logger, queue: make(chan *record.Record, cfg.Queue), kick: make(chan struct{}, 1), done: make(chan struct{})}
		rec.timer = time.AfterFunc(batchWindow, rec.wake)
		rec.timer.Stop() // armed by the first record
		return rec, nil
	})
	if err != nil {
		return nil, err
	}
	return val.(*recorder), nil
}

// record queues one record; it never blocks. The record is encoded by the
// writer, off the request's goroutine, so it must not change once queued.
// It is dropped (and counted) when the queue is full, in records or in
// bytes.
func (rec *recorder) record(v *record.Record) {
	rec.start.Do(func() { go rec.run() })
	rec.mu.RLock()
	defer rec.mu.RUnlock()
	if rec.closed {
		recorderDropped.Inc()
		return
	}
	held := heldBytes(v)
	if rec.queued.Add(held) > rec.cfg.QueueBytes {
		rec.queued.Add(-held)
		recorderDropped.Inc()
		return
	}
	select {
	case rec.queue <- v:
		if !rec.armed.Swap(true) {
			rec.timer.Reset(batchWindow)
		}
	default:
		rec.queued.Add(-held)
		recorderDropped.Inc()
	}
}

// heldBytes is what a record holds beside its fixed fields: its bodies,
// its events (each with eventOverhead) and its headers as written.
func heldBytes(v *record.Record) int64 {
	// The two headers share one buffer (writtenHeaders), the reply's slice
	// running to its end: its room, not only its length, is held.
	n := contentBytes(v.Request.Content) + contentBytes(v.Response.Content) +
		len(v.Request.Written.JSON) + cap(v.Response.Written.JSON)
	for _, ev := range v.Response.Events {
		n += len(ev) + eventOverhead
	}
	return int64(n)
}

func contentBytes(c record.Content) int {
	return len(c.Body) + len(c.BodyText) + len(c.BodyBase64)
}

// wake wakes the writer, or leaves it the wake it has not yet taken.
func (rec *recorder) wake() {
	select {
	case rec.kick <- struct{}{}:
	default:
	}
}

// run writes queued records until the queue is closed, in batches: the
// first record of a batch arms a timer that wakes the writer batchWindow
// later, when it encodes every record waiting and writes them out at
// once. A record reaches the file about batchWindow after its exchange
// ended; under load the writer wakes once a batch, not once a record, and
// writes whole buffers. Neither is the writer woken as the first record
// arrives nor is that record encoded then: it arrives as its exchange
// ends, when the client is reading the reply's end, and on a machine of
// few cores waking a goroutine then (a thread to run it, which spins for
// more work) or encoding would take a core from that client (a stream's
// [DONE] came later).
func (rec *recorder) run() {
	defer close(rec.done)
	w := newRecordWriter(rec)
	defer w.close()
	for range rec.kick {
		rec.armed.Store(false) // a record queued from now on arms the next wake
		if !w.drain() {
			return
		}
		w.flush()
	}
}

// batchWindow is how long the writer lets records gather before it
// writes them.
const batchWindow = 5 * time.Millisecond

// drain writes the records waiting in the queue, and reports false once
// the queue is closed.
func (rw *recordWriter) drain() bool {
	for {
		select {
		case v, ok := <-rw.rec.queue:
			if !ok {
				return false
			}
			rw.write(v)
		default:
			return true
		}
	}
}

// recordWriter is the writer goroutine's state: the open file and the
// buffers each record is encoded into and written through.
type recordWriter struct {
	rec  *recorder
	f    *os.File
	w    *bufio.Writer
	line []byte
	enc  record.Encoder
}

func newRecordWriter(rec *recorder) *recordWriter {
	return &recordWriter{rec: rec}
}

// write encodes one record as a JSON line into the buffer, rotating the
// file first when the line would take it past max_size.
func (rw *recordWriter) write(v *record.Record) {
	rec := rw.rec
	rw.line = rw.enc.Append(rw.line[:0], v)
	rec.queued.Add(-heldBytes(v))
	var err error
	if rw.f == nil || rec.size.Load()+int64(len(rw.line)) > rec.cfg.MaxSize {
		if rw.f != nil {
			rw.flush()
		}
		if rw.f, err = rec.rotate(rw.f); err != nil {
			rec.logger.Error("opening record file", zap.String("path", rec.cfg.Path), zap.Error(err))
			recorderDropped.Inc()
			return
		}
		rw.w = bufio.NewWriterSize(rw.f, 64<<10)
	}
	if len(rw.line) > rw.w.Available() {
		rw.flush() // whole lines only, so a reader never sees half of one
	}
	n, _ := rw.w.Write(rw.line)
	rec.size.Add(int64(n))
}

// flush writes what the buffer holds; after a failed write it starts
// afresh, the lines it held lost (and logged).
func (rw *recordWriter) flush() {
	if rw.f == nil {
		return
	}
	if err := rw.w.Flush(); err != nil {
		rw.rec.logger.Error("writing record", zap.Error(err))
		rw.w.Reset(rw.f)
	}
}

func (rw *recordWriter) close() {
	rw.flush()
	if rw.f != nil {
		rw.f.Close()
	}
}

// rotate closes f, shifts full files to .1, .2, ... and opens the file.
// The first call only opens (appending to what an earlier run left).
func (rec *recorder) rotate(f *os.File) (*os.File, error) {
	path := rec.cfg.Path
	if f != nil {
		f.Close()
		for i := rec.cfg.MaxFiles - 1; i >= 1; i-- {
			os.Rename(path+"."+strconv.Itoa(i), path+"."+strconv.Itoa(i+1))
		}
		if err := os.Rename(path, path+".1"); err != nil {
			return nil, fmt.Errorf("rotating: %w", err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, err
	}
	nf, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return nil, err
	}
	st, err := nf.Stat()
	if err != nil {
		nf.Close()
		return nil, err
	}
	rec.size.Store(st.Size())
	return nf, nil
}

// Destruct stops the writer once the last config using it is gone: records
// queued before are written, later ones are dropped.
func (rec *recorder) Destruct() error {
	rec.mu.Lock()
	rec.closed = true
	close(rec.queue)
	rec.mu.Unlock()
	rec.wake()
	// A writer never started has nothing to drain: mark it done instead.
	rec.start.Do(func() { close(rec.done) })
	<-rec.done
	return nil
}
