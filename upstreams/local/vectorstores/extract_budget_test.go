package vectorstores

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/testdocs"
	"github.com/modelgate/modelgate/upstreams/tokens"
)

// pagesPDF is a PDF of n pages sharing one content stream that shows
// "page".
func pagesPDF(n int) []byte {
	kids := make([]string, n)
	objects := []string{
		"<< /Type /Catalog /Pages 2 0 R >>", "",
		"<< /Length 37 >>\nstream\nBT /F1 12 Tf 72 720 Td (page) Tj ET\nendstream",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	}
	for i := range n {
		kids[i] = fmt.Sprintf("%d 0 R", len(objects)+1)
		objects = append(objects, "<< /Type /Page /Parent 2 0 R /Contents 3 0 R /Resources << /Font << /F1 4 0 R >> >> >>")
	}
	objects[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n)
	return testdocs.PDFObjects(objects...)
}

// A PDF is read up to maxPDFPages pages; one more is refused, with a
// clear error, after reading no more than that.
func TestPDFPageBudget(t *testing.T) {
	text, err := extractText(context.Background(), "fits.pdf", pagesPDF(maxPDFPages))
	if err != nil || strings.Count(text, "page") != maxPDFPages {
		t.Fatalf("%d pages: %d pages of text, %v", maxPDFPages, strings.Count(text, "page"), err)
	}
	_, err = extractText(context.Background(), "over.pdf", pagesPDF(maxPDFPages+1))
	var fe *FileError
	if !errors.As(err, &fe) || fe.Code != codeInvalidFile || !strings.Contains(fe.Message, "more than the 10000 pages") {
		t.Fatalf("%d pages: %v", maxPDFPages+1, err)
	}
	_, err = extractText(context.Background(), "cyclic.pdf", testdocs.CyclicPDF())
	if !errors.As(err, &fe) || !strings.Contains(fe.Message, "lists itself") {
		t.Fatalf("cyclic page tree: %v", err)
	}
}

// An extraction whose ingestion ends (a stop, a delete) ends at the next
// page; it is not a failure of the file.
func TestExtractionStopsWithItsIngestion(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := extractText(ctx, "many.pdf", pagesPDF(50))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled extraction: %v", err)
	}
	_, err = extractText(ctx, "d.docx", testdocs.DOCX("words"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled docx extraction: %v", err)
	}
}

// A zip bomb: a docx of a few hundred kilobytes whose document.xml
// unpacks to 260 MiB of text runs is refused once 64 MiB of text are
// kept, with an error that says so. Before, its text was kept up to the
// 256 MiB unpacked bound, and the part, cut there mid-element, was called
// invalid XML.
func TestDOCXBombIsRefusedAtTheTextBound(t *testing.T) {
	run := "<w:r><w:t>" + strings.Repeat("a", 64<<10) + "</w:t></w:r>"
	bomb := testdocs.DOCXBomb(run, (260<<20)/len(run))
	_, err := extractText(context.Background(), "bomb.docx", bomb)
	var fe *FileError
	if !errors.As(err, &fe) || fe.Code != codeInvalidFile || !strings.Contains(fe.Message, "more than the 67108864 bytes of text") {
		t.Fatalf("a %d KiB docx of 260 MiB unpacked: %v", len(bomb)>>10, err)
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestExtractedTextIsBounded: a text file yields at most maxExtractedBytes
// (a file of that size passes, one byte more is refused), and an Office
// document that unpacks to more text than its limit is refused as its XML
// is read: with a limit of 1 MiB, a part of 64 paragraphs of 64 KiB is
// read no further than about the limit. (Before, every part was read and
// its text held whole before the size was checked: a 200 KiB .docx of 200
// paragraphs of 1 MiB allocated 1,063 MiB in 5.0 s to be refused, 342 MiB
// in 0.75 s now, in one run without -race.)
func TestExtractedTextIsBounded(t *testing.T) {
	text := strings.Repeat("a", maxExtractedBytes)
	if got, err := extractText(context.Background(), "fits.txt", []byte(text)); err != nil || len(got) != maxExtractedBytes {
		t.Fatalf("%d bytes of text: %d extracted, %v", maxExtractedBytes, len(got), err)
	}
	_, err := extractText(context.Background(), "over.txt", []byte(text+"a"))
	var fe *FileError
	if !errors.As(err, &fe) || fe.Code != codeInvalidFile || !strings.Contains(fe.Message, "more than the 67108864 bytes of text") {
		t.Fatalf("%d bytes of text: %v", maxExtractedBytes+1, err)
	}

	const limit = 1 << 20
	part := `<w:document xmlns:w="w"><w:body>` + strings.Repeat("<w:p><w:r><w:t>"+strings.Repeat("a", 64<<10)+"</w:t></w:r></w:p>", 64) + `</w:body></w:document>`
	in := &countingReader{r: strings.NewReader(part)}
	elements := maxXMLElements
	err = xmlRuns(context.Background(), in, &textOut{limit: limit}, &elements)
	if !errors.As(err, &fe) || !strings.Contains(fe.Message, "more than the 1048576 bytes of text") {
		t.Fatalf("%d bytes of text with a limit of %d: %v", 64*64<<10, limit, err)
	}
	if in.n > 2*limit {
		t.Fatalf("refusing more than %d bytes of text read %d of the part's %d bytes", limit, in.n, len(part))
	}
}

// A file of maxFileTokens tokens is chunked; one token more is refused
// naming the limit.
func TestFileTokensAreBounded(t *testing.T) {
	enc := tokens.ForModel("text-embedding-3-small")
	text := strings.Repeat(" a", maxFileTokens)
	if n := enc.Count(text); n != maxFileTokens {
		t.Fatalf("the text has %d tokens, want %d", n, maxFileTokens)
	}
	if chunks, err := chunkText(enc, text, AutoChunkTokens, AutoOverlapTokens); err != nil || len(chunks) != maxFileTokens/(AutoChunkTokens-AutoOverlapTokens)-1 {
		t.Fatalf("%d tokens: %d chunks, %v", maxFileTokens, len(chunks), err)
	}
	_, err := chunkText(enc, text+" a", AutoChunkTokens, AutoOverlapTokens)
	var fe *FileError
	if !errors.As(err, &fe) || fe.Code != codeInvalidFile || fe.Message != "The file has more than the 5000000 tokens that can be indexed." {
		t.Fatalf("%d tokens: %v", maxFileTokens+1, err)
	}
}
