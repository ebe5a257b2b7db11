package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"
)

// The Redis client allocates what a reply declares before it reads it:
// a bulk string's length, an array's element count, a line of any
// length. A Redis that turns hostile (or a stranger on its address) could
// declare 2^62 elements and take the gateway down from a background
// renewal, where nothing recovers a panic. The gateway's replies from
// Redis are a script's seven numbers, a status or a count, so each reply
// is read through bounds far above them, and a reply past one closes the
// connection as an error instead.
const (
	// maxRESPLine bounds a header, status, error or number line.
	maxRESPLine = 64 << 10
	// maxRESPBulk bounds one bulk string.
	maxRESPBulk = 1 << 20
	// maxRESPElems bounds the elements one reply declares, all
	// aggregates in it together.
	maxRESPElems = 4096
	// maxRESPDepth bounds aggregates nested in one another.
	maxRESPDepth = 16
	// maxRESPReply bounds the bytes of one reply.
	maxRESPReply = 4 << 20
)

// errRESPBounds: a reply from Redis passed one of the bounds above.
var errRESPBounds = errors.New("redis reply past the gateway's bounds")

// dialBounded dials Redis as the client's own dialer would, reading
// every reply through respConn.
func dialBounded(timeout time.Duration) func(context.Context, string, string) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 5 * time.Minute}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &respConn{Conn: conn}, nil
	}
}

// respConn is a connection to Redis whose reads are checked against the
// bounds before the client sees them. Once a reply passes one, every
// read answers that error (the client then drops the connection).
type respConn struct {
	net.Conn
	scan respScanner
	err  error
}

func (c *respConn) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		if c.err = c.scan.feed(p[:n]); c.err != nil {
			return 0, c.err
		}
	}
	return n, err
}

// respScanner follows the replies of a RESP2 or RESP3 stream far enough
// to bound them: their lines, the lengths and counts they declare, their
// nesting and their size. It does not check that they are well formed
// beyond that; the client does.
type respScanner struct {
	line  []byte     // the line read so far
	skip  int64      // bytes of a bulk string (with its CRLF) still due
	open  []openAggr // the aggregates the reply is inside
	elems int        // elements the reply has declared
	size  int64      // bytes of the reply so far
}

type openAggr struct {
	left int  // elements still due
	attr bool // an attribute, which annotates the next element and is not one
}

func (s *respScanner) feed(b []byte) error {
	for len(b) > 0 {
		if s.skip > 0 {
			k := min(int64(len(b)), s.skip)
			b, s.skip = b[k:], s.skip-k
			if s.skip == 0 {
				s.ended()
			}
			continue
		}
		end := len(b)
		for i, c := range b {
			if c == '\n' {
				end = i + 1
				break
			}
		}
		if len(s.line)+end > maxRESPLine {
			return fmt.Errorf("%w: a line of more than %d bytes", errRESPBounds, maxRESPLine)
		}
		s.line = append(s.line, b[:end]...)
		b = b[end:]
		if s.line[len(s.line)-1] != '\n' {
			return nil
		}
		s.size += int64(len(s.line))
		err := s.header(s.line)
		s.line = s.line[:0]
		if err != nil {
			return err
		}
	}
	return nil
}

// header takes one whole line (CRLF included) where a reply or element
// starts.
func (s *respScanner) header(line []byte) error {
	kind, text := line[0], string(line[1:len(line)-1])
	if len(text) > 0 && text[len(text)-1] == '\r' {
		text = text[:len(text)-1]
	}
	switch kind {
	case '$', '=', '!': // bulk string, verbatim string, bulk error
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil || n > maxRESPBulk {
			return fmt.Errorf("%w: a string of length %q (at most %d)", errRESPBounds, text, maxRESPBulk)
		}
		if n < 0 {
			s.ended()
			return nil
		}
		if s.size += n + 2; s.size > maxRESPReply {
			return fmt.Errorf("%w: a reply of more than %d bytes", errRESPBounds, maxRESPReply)
		}
		s.skip = n + 2
	case '*', '~', '>', '%', '|': // array, set, push, map, attribute
		n, err := strconv.Atoi(text)
		if err != nil || n > maxRESPElems {
			return fmt.Errorf("%w: an aggregate of %q elements (at most %d)", errRESPBounds, text, maxRESPElems)
		}
		if kind == '%' || kind == '|' {
			n *= 2
		}
		if s.elems += max(n, 0); s.elems > maxRESPElems {
			return fmt.Errorf("%w: a reply of more than %d elements", errRESPBounds, maxRESPElems)
		}
		if n <= 0 {
			s.ended()
			return nil
		}
		if len(s.open) == maxRESPDepth {
			return fmt.Errorf("%w: aggregates nested more than %d deep", errRESPBounds, maxRESPDepth)
		}
		s.open = append(s.open, openAggr{left: n, attr: kind == '|'})
	default: // a line that is a whole element: status, error, number, ...
		s.ended()
	}
	if s.size > maxRESPReply {
		return fmt.Errorf("%w: a reply of more than %d bytes", errRESPBounds, maxRESPReply)
	}
	return nil
}

// ended counts one element ended: the aggregates it completes end too,
// and when none is left open the reply has ended.
func (s *respScanner) ended() {
	for len(s.open) > 0 {
		top := &s.open[len(s.open)-1]
		if top.left--; top.left > 0 {
			return
		}
		attr := top.attr
		s.open = s.open[:len(s.open)-1]
		if attr {
			return // the element it annotates is still to come
		}
	}
	s.elems, s.size = 0, 0
}
