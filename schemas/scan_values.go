package schemas

import (
	"bytes"
	"strconv"

	"github.com/modelgate/modelgate/internal/jsonlex"
)

// The scanner's (chunk_scan.go) readers of literal values: null and
// integers.

func (s *scanner) null() bool {
	if !s.at('n') || !bytes.HasPrefix(s.data[s.i:], []byte("null")) {
		return false
	}
	s.i += len("null")
	return true
}

// integer reads a number written as an integer (isInteger) and returns
// its bytes: an optional minus, then 0 or digits not starting with 0,
// which no fraction or exponent follows (a number that has one is not an
// integer; one cut short there is no number).
func (s *scanner) integer() []byte {
	s.i = jsonlex.SkipSpace(s.data, s.i)
	d, i := s.data, s.i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	default:
		return nil
	}
	if i < len(d) && (d[i] == '.' || d[i] == 'e' || d[i] == 'E') {
		return nil
	}
	n := d[s.i:i]
	s.i = i
	return n
}

// nonNegative reads an integer of at least 0 that fits an int64.
func (s *scanner) nonNegative() (int64, bool) {
	n := s.integer()
	if n == nil {
		return 0, false
	}
	if n[0] != '-' && len(n) < 19 { // below 10^18: no overflow
		var v int64
		for _, c := range n {
			v = v*10 + int64(c-'0')
		}
		return v, true
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	return i, err == nil && i >= 0
}
