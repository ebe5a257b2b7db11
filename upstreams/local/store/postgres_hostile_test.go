package store

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/modelgate/modelgate/internal/testpg"
)

// turningServer stands between the store and the test's PostgreSQL: each
// connection made while it is honest is piped to the real server; one
// made once it has turned meets a fake server (pgproto3's Backend) that
// completes the startup, then answers the first message of the
// connection with the header of a message announcing a body of
// announced bytes, sends a few bytes of it and hangs up.
type turningServer struct {
	// dsn is the test's DSN with the host and port of this server.
	dsn       string
	announced atomic.Int64 // 0 while honest
	// hostile counts the connections served by the fake.
	hostile atomic.Int64
}

func newTurningServer(t *testing.T) *turningServer {
	t.Helper()
	real := testpg.DSN(t)
	u, err := url.Parse(real)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	u.Host = ln.Addr().String()
	s := &turningServer{dsn: u.String()}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer conn.Close()
				if n := s.announced.Load(); n > 0 {
					s.hostile.Add(1)
					announceHuge(conn, n)
					return
				}
				pipe(conn, target)
			})
		}
	})
	return s
}

// turn makes the connections made from now on announce bodies of n bytes.
func (s *turningServer) turn(n int64) { s.announced.Store(n) }

// pipe joins conn to the server at target until either hangs up.
func pipe(conn net.Conn, target string) {
	up, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, conn); done <- struct{}{} }()
	go func() { io.Copy(conn, up); done <- struct{}{} }()
	<-done
}

// announceHuge is the fake server: a correct startup, then a DataRow
// header announcing n bytes where a reply to the client's first message
// belongs.
func announceHuge(conn net.Conn, n int64) {
	b := pgproto3.NewBackend(conn, conn)
	if _, err := b.ReceiveStartupMessage(); err != nil {
		return
	}
	b.Send(&pgproto3.AuthenticationOk{})
	b.Send(&pgproto3.ParameterStatus{Name: "server_version", Value: "17.0"})
	b.Send(&pgproto3.ParameterStatus{Name: "client_encoding", Value: "UTF8"})
	b.Send(&pgproto3.ParameterStatus{Name: "standard_conforming_strings", Value: "on"})
	b.Send(&pgproto3.BackendKeyData{ProcessID: 1, SecretKey: []byte{0, 0, 0, 1}})
	b.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	if b.Flush() != nil {
		return
	}
	if _, err := b.Receive(); err != nil {
		return
	}
	header := []byte{'D', 0, 0, 0, 0}
	binary.BigEndian.PutUint32(header[1:], uint32(n+4))
	conn.Write(append(header, 0, 1, 0, 0, 0, 8))
}

// allocated is the bytes the process has allocated so far.
func allocated() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// TestPostgresRefusesHugeMessages: a server that turns hostile announces
// a message of PostgreSQL's largest size (1 GiB) on each connection the
// pool makes; each call fails, naming the length, without reserving it
// (the driver's default reserves it, on each connection), and the store
// serves again once the server is honest.
func TestPostgresRefusesHugeMessages(t *testing.T) {
	const announced, calls = pgLargeMessageLimit, 4
	srv := newTurningServer(t)
	s, err := OpenPostgres(t.Context(), srv.dsn+"&pool_max_conns=4", PoolOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	content := "a file stored before the server turned"
	id := putFile(t, s, "alice", "assistants", []byte(content)).ID

	srv.turn(announced)
	s.pool.Reset() // every connection from now on is made anew
	before := allocated()
	errs := make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() { _, errs[i] = s.GetFile(t.Context(), "alice", id) })
	}
	wg.Wait()
	grew := allocated() - before
	t.Logf("%d calls, each announced %d bytes: %d bytes allocated meanwhile", calls, announced, grew)
	if grew > announced/16 {
		t.Fatalf("%d bytes allocated while %d calls were each announced %d bytes", grew, calls, announced)
	}
	for i, err := range errs {
		var tooLong *pgproto3.ExceededMaxBodyLenErr
		if !errors.As(err, &tooLong) || tooLong.ActualBodyLen != announced || int64(tooLong.MaxExpectedBodyLen) != s.MaxMessageBody() {
			t.Fatalf("call %d: err = %v, want the announced %d bytes refused past the bound %d", i, err, announced, s.MaxMessageBody())
		}
	}
	if got := srv.hostile.Load(); got < calls {
		t.Fatalf("%d connections met the hostile server, want at least %d", got, calls)
	}

	srv.turn(0)
	r, err := s.OpenFile(t.Context(), "alice", id)
	if err != nil {
		t.Fatalf("once the server is honest again: %v", err)
	}
	defer r.Close()
	if got, err := io.ReadAll(r); err != nil || string(got) != content {
		t.Fatalf("once the server is honest again: %q, %v", got, err)
	}
}

// TestPostgresAnnouncementsWatchRefusesHugeMessages: the watch's own
// connection, outside the pool, has the same bound: the watch ends with
// an error (the driver reports the connection closed: it drops the cause
// of a failed simple query's first read) and nothing near the announced
// size is allocated.
func TestPostgresAnnouncementsWatchRefusesHugeMessages(t *testing.T) {
	const announced = pgLargeMessageLimit
	srv := newTurningServer(t)
	s, err := OpenPostgres(t.Context(), srv.dsn, PoolOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	srv.turn(announced)
	before := allocated()
	err = s.WatchAnnouncements(t.Context(), func(string) {})
	grew := allocated() - before
	if err == nil || srv.hostile.Load() == 0 {
		t.Fatalf("watch ended with %v after %d hostile connections", err, srv.hostile.Load())
	}
	if grew > announced/16 {
		t.Fatalf("%d bytes allocated while the watch was announced %d bytes", grew, announced)
	}
}

// TestPostgresAllowValuesRaisesTheBound: a config allowing larger values
// raises the bound, and the connections made before are made again: a
// message one byte past the former bound is then read (the fake cuts it
// short), not refused. A smaller allowance never lowers it.
func TestPostgresAllowValuesRaisesTheBound(t *testing.T) {
	srv := newTurningServer(t)
	s, err := OpenPostgres(t.Context(), srv.dsn, PoolOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	former := s.MaxMessageBody()
	if former != 2*MaxDocumentText+rowOverhead {
		t.Fatalf("bound at open %d, want twice MaxDocumentText and a row's overhead", former)
	}
	srv.turn(former + 1)
	s.pool.Reset()
	var tooLong *pgproto3.ExceededMaxBodyLenErr
	if _, err := s.Size(t.Context()); !errors.As(err, &tooLong) {
		t.Fatalf("a message of %d bytes past the bound %d: %v", former+1, former, err)
	}
	srv.turn(0)
	if _, err := s.Size(t.Context()); err != nil {
		t.Fatal(err) // and the pool keeps an honest connection
	}
	const maxBodySize = 100 << 20
	s.AllowValues(maxBodySize)
	if got := s.MaxMessageBody(); got != 2*maxBodySize+rowOverhead {
		t.Fatalf("bound after allowing %d-byte values: %d", maxBodySize, got)
	}
	s.AllowValues(1 << 20)
	if got := s.MaxMessageBody(); got != 2*maxBodySize+rowOverhead {
		t.Fatalf("a smaller allowance lowered the bound to %d", got)
	}
	srv.turn(former + 1)
	hostile := srv.hostile.Load()
	_, err = s.Size(t.Context())
	if err == nil || errors.As(err, &tooLong) || srv.hostile.Load() == hostile {
		t.Fatalf("a message of %d bytes after the bound was raised past it: %v (%d hostile connections)", former+1, err, srv.hostile.Load()-hostile)
	}
}

// TestMessageBoundBoundary: the store's frontend reads a message of
// exactly the bound and refuses one byte more before reading its body.
func TestMessageBoundBoundary(t *testing.T) {
	const bound = 1 << 20
	b := &messageBound{}
	b.n.Store(bound)
	for _, body := range []int{bound, bound + 1} {
		msg := make([]byte, 5+body)
		msg[0] = 'D'
		binary.BigEndian.PutUint32(msg[1:], uint32(4+body))
		binary.BigEndian.PutUint16(msg[5:], 1)
		binary.BigEndian.PutUint32(msg[7:], uint32(body-6))
		m, err := b.frontend(strings.NewReader(string(msg)), io.Discard).Receive()
		var tooLong *pgproto3.ExceededMaxBodyLenErr
		switch {
		case body <= bound && (err != nil || len(m.(*pgproto3.DataRow).Values[0]) != body-6):
			t.Fatalf("a %d-byte body at the bound %d: %v", body, bound, err)
		case body > bound && !errors.As(err, &tooLong):
			t.Fatalf("a %d-byte body past the bound %d: %v", body, bound, err)
		}
	}
}

// TestMaxMessageBody: the bound follows the largest value allowed, never
// below what MaxDocumentText needs, never past PostgreSQL's own limit.
func TestMaxMessageBody(t *testing.T) {
	for _, c := range []struct{ maxValue, want int64 }{
		{0, 2*MaxDocumentText + rowOverhead},
		{MaxDocumentText / 2, 2*MaxDocumentText + rowOverhead},
		{200 << 20, 400<<20 + rowOverhead},
		{1 << 40, pgLargeMessageLimit},
	} {
		if got := maxMessageBody(c.maxValue); got != c.want {
			t.Errorf("maxMessageBody(%d) = %d, want %d", c.maxValue, got, c.want)
		}
	}
}

// TestPostgresConnectionsAreMadeInBoundedTime: without connect_timeout in
// the DSN, making a connection is bounded by reachTimeout; the DSN's own
// is kept.
func TestPostgresConnectionsAreMadeInBoundedTime(t *testing.T) {
	dsn := testpg.DSN(t)
	for _, c := range []struct {
		dsn  string
		want time.Duration
	}{{dsn, reachTimeout}, {dsn + "&connect_timeout=3", 3 * time.Second}} {
		s, err := OpenPostgres(t.Context(), c.dsn, PoolOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := s.pool.Config().ConnConfig.ConnectTimeout
		s.Close()
		if got != c.want {
			t.Errorf("connect timeout %v, want %v", got, c.want)
		}
	}
}
