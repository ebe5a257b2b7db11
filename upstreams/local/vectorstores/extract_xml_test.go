package vectorstores

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/testdocs"
)

// extractCounted extracts name and returns its text, the FileError it
// failed with, if any, and the bytes it allocated.
func extractCounted(t *testing.T, name string, data []byte) (string, *FileError, uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	text, err := extractText(context.Background(), name, data)
	runtime.ReadMemStats(&after)
	var fe *FileError
	if err != nil && !errors.As(err, &fe) {
		t.Fatalf("%s: %v", name, err)
	}
	return text, fe, after.TotalAlloc - before.TotalAlloc
}

// An Office document's XML nests at most maxXMLDepth elements: the
// deepest allowed is read (document, body, paragraph, run and text hold
// five levels), one level more fails the file with a clear error, and the
// 68 KB document of 10 million levels (1.85 GB to read whole) fails
// having allocated a few megabytes.
func TestDOCXNestingIsBounded(t *testing.T) {
	text, fe, _ := extractCounted(t, "fits.docx", testdocs.DOCXDeep(maxXMLDepth-5))
	if fe != nil || text != "deep\n" {
		t.Fatalf("%d levels: %q %v", maxXMLDepth, text, fe)
	}
	for _, depth := range []int{maxXMLDepth - 4, 10_000_000} {
		doc := testdocs.DOCXDeep(depth)
		_, fe, grew := extractCounted(t, "deep.docx", doc)
		t.Logf("%d levels: %d KB packed, %d KB allocated", depth, len(doc)>>10, grew>>10)
		if fe == nil || fe.Code != codeInvalidFile || !strings.Contains(fe.Message, "deeper than 256 levels") {
			t.Fatalf("%d levels: %v", depth, fe)
		}
		if grew > 16<<20 {
			t.Fatalf("%d levels: %d MiB allocated", depth, grew>>20)
		}
	}
}

// An XML part is read while its elements fit what is left of the
// document's count, and fails the file at the first one more; a document
// of maxXMLElements+1 elements (document, body, paragraph and text runs)
// fails.
func TestDOCXElementsAreBounded(t *testing.T) {
	part := `<w:document xmlns:w="w"><w:body><w:p><w:t>a</w:t><w:t>b</w:t></w:p></w:body></w:document>`
	for _, c := range []struct {
		left int
		ok   bool
	}{{5, true}, {4, false}} {
		left := c.left
		var b textOut
		err := xmlRuns(context.Background(), strings.NewReader(part), &b, &left)
		var fe *FileError
		if c.ok != (err == nil) || (!c.ok && (!errors.As(err, &fe) || !strings.Contains(fe.Message, "more than 2000000 elements"))) {
			t.Fatalf("5 elements with %d left: %v", c.left, err)
		}
		if c.ok && (b.String() != "ab\n" || left != 0) {
			t.Fatalf("5 elements with %d left: %q, %d left after", c.left, b.String(), left)
		}
	}
	if testing.Short() {
		t.Skip("reads 2 million elements")
	}
	_, fe, _ := extractCounted(t, "over.docx", testdocs.DOCXBomb(`<w:t>a</w:t>`, maxXMLElements-2))
	if fe == nil || fe.Code != codeInvalidFile || !strings.Contains(fe.Message, "more than 2000000 elements") {
		t.Fatalf("%d elements: %v", maxXMLElements+1, fe)
	}
}
