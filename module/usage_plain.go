package modelgate

import (
	"bytes"

	"github.com/tidwall/gjson"

	"github.com/modelgate/modelgate/internal/jsonlex"
)

// scannedUsage is readUsage of the bytes of a usage object that
// schemas.ScanResponse read (valid JSON): read from its bytes when it is
// plain (plainUsage), as chat completions' usage is, else by gjson.
func scannedUsage(b []byte) *usage {
	if u, ok := plainUsage(b); ok {
		return u
	}
	return readUsage(gjson.ParseBytes(b))
}

// plainUsage is readUsage of the usage object b, without gjson, when b is
// plain: member names without escapes, and values integers of at most 18
// digits (no fraction, no exponent) or null, the details' values
// (usageDetails) objects of those. ok is false for any other b, which
// readUsage reads. The first member of a name counts, as in readUsage.
// TestPlainUsageIsReadUsage and FuzzPlainUsage hold it to readUsage.
func plainUsage(b []byte) (u *usage, ok bool) {
	var counts [len(usageNames)]int64
	var seen [len(usageNames)]bool
	r := plainReader{data: b}
	ok = r.object(func(name []byte) bool {
		i := usageName(name)
		if i >= 0 && usageDetails[i] != "" {
			// gjson reads a detail of null as 0; of a number, as 0 too,
			// which is left to it.
			if r.null() {
				seen[i] = true
				return true
			}
			var n int64
			found := false
			if !r.object(func(name []byte) bool {
				v, ok := r.count()
				if ok && !found && string(name) == usageDetails[i] {
					n, found = v, true
				}
				return ok
			}) {
				return false
			}
			if !seen[i] {
				counts[i], seen[i] = n, true
			}
			return true
		}
		v, ok := r.count()
		if ok && i >= 0 && !seen[i] {
			counts[i], seen[i] = v, true
		}
		return ok
	})
	if !ok || jsonlex.SkipSpace(b, r.i) != len(b) {
		return nil, false
	}
	return usageOf(counts, seen[4]), true
}

// usageName is the index of name in usageNames, or -1.
func usageName(name []byte) int {
	for i, n := range usageNames {
		if string(name) == n {
			return i
		}
	}
	return -1
}

// plainReader reads the plain JSON plainUsage takes.
type plainReader struct {
	data []byte
	i    int
}

// at skips space and reports whether c is next; if so it reads it.
func (r *plainReader) at(c byte) bool {
	if r.i < len(r.data) && r.data[r.i] != c {
		r.i = jsonlex.SkipSpace(r.data, r.i) // most JSON sent has no space
	}
	if r.i < len(r.data) && r.data[r.i] == c {
		r.i++
		return true
	}
	return false
}

// object reads an object whose names have no escapes, calling member
// with each name to read its value.
func (r *plainReader) object(member func(name []byte) bool) bool {
	if !r.at('{') {
		return false
	}
	if r.at('}') {
		return true
	}
	for {
		if !r.at('"') {
			return false
		}
		end := bytes.IndexByte(r.data[r.i:], '"')
		if end < 0 {
			return false
		}
		name := r.data[r.i : r.i+end]
		r.i += end + 1
		if bytes.IndexByte(name, '\\') >= 0 || !r.at(':') || !member(name) {
			return false
		}
		if !r.at(',') {
			return r.at('}')
		}
	}
}

// null reads null, if it is next.
func (r *plainReader) null() bool {
	r.i = jsonlex.SkipSpace(r.data, r.i)
	if r.i < len(r.data) && r.data[r.i] == 'n' && bytes.HasPrefix(r.data[r.i:], []byte("null")) {
		r.i += len("null")
		return true
	}
	return false
}

// count reads null (0) or an integer of at most 18 digits, which an
// int64 holds, followed by none of a number's other parts.
func (r *plainReader) count() (int64, bool) {
	if r.null() {
		return 0, true
	}
	neg := r.at('-')
	start, n := r.i, int64(0)
	for r.i < len(r.data) && '0' <= r.data[r.i] && r.data[r.i] <= '9' && r.i-start < 18 {
		n = n*10 + int64(r.data[r.i]-'0')
		r.i++
	}
	if r.i == start || r.i < len(r.data) && numberPart(r.data[r.i]) {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// numberPart: c continues a number past the digits count reads.
func numberPart(c byte) bool {
	return '0' <= c && c <= '9' || c == '.' || c == 'e' || c == 'E'
}
