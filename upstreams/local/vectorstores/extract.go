package vectorstores

import (
	"archive/zip"
	"bytes"
	"cmp"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// Codes of a vector store file's last_error.
const (
	codeUnsupportedFile = "unsupported_file"
	codeInvalidFile     = "invalid_file"
	codeServerError     = "server_error"
)

// FileError is why a file cannot be indexed; it becomes the attachment's
// last_error.
type FileError struct {
	Code, Message string
	// Cause is a library's own error behind Message, for the log only:
	// last_error says what is wrong with the file in our words, never in
	// a parser's.
	Cause error
}

func (e *FileError) Error() string { return e.Code + ": " + e.Message }

func (e *FileError) Unwrap() error { return e.Cause }

// because records the library error behind e.
func (e *FileError) because(cause error) *FileError {
	e.Cause = cause
	return e
}

func invalidFile(format string, args ...any) *FileError {
	return &FileError{Code: codeInvalidFile, Message: fmt.Sprintf(format, args...)}
}

// textExtensions are read as UTF-8 text as they are: prose, data and code.
var textExtensions = map[string]bool{
	".txt": true, ".md": true, ".markdown": true, ".rst": true, ".tex": true, ".log": true,
	".json": true, ".jsonl": true, ".csv": true, ".tsv": true, ".xml": true, ".yaml": true, ".yml": true, ".toml": true, ".ini": true,
	".c": true, ".h": true, ".cc": true, ".cpp": true, ".hpp": true, ".cs": true, ".css": true, ".go": true, ".java": true,
	".js": true, ".mjs": true, ".jsx": true, ".ts": true, ".tsx": true, ".php": true, ".py": true, ".rb": true, ".sh": true,
	".rs": true, ".kt": true, ".swift": true, ".scala": true, ".sql": true, ".lua": true, ".pl": true, ".r": true,
}

// supportedExtensions names what extractText reads, for error messages.
const supportedExtensions = "text, markdown, code, json, csv, html, pdf, docx and pptx"

// maxUnpackedBytes bounds what an office document may unpack to.
const maxUnpackedBytes = 256 << 20

// Extraction budget: what one document may cost, whatever it claims.
const (
	// maxPDFPages is the most pages read from a PDF; a page tree claiming
	// more (a Count of 2e9) is read only this far.
	maxPDFPages = 10_000
	// maxPageTreeDepth bounds the walk of a PDF's page tree: a tree that
	// lists itself among its kids is found out here.
	maxPageTreeDepth = 32
	// maxExtractedBytes is the most text one document may yield (the
	// store keeps it whole, and reads it whole).
	maxExtractedBytes = store.MaxDocumentText
	// maxXMLDepth is how deeply an Office document's XML may nest
	// elements (the decoder holds each open one: 10 million levels, 68 KB
	// packed, took 1.85 GB); real documents nest a few dozen.
	maxXMLDepth = 256
	// maxXMLElements is the most elements an Office document's XML parts
	// may hold together, some 6,000 pages of formatted text (reading one
	// costs a few microseconds).
	maxXMLElements = 2_000_000
	// extractTimeout is how long one document's extraction may run; it is
	// checked between pages and XML tokens, so a document ends within a
	// page of it.
	extractTimeout = 2 * time.Minute
)

// extractText returns the text of a file, chosen by its extension. It
// gives up, as an invalid file, when ctx ends or the budget above runs
// out.
func extractText(ctx context.Context, filename string, data []byte) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, extractTimeout)
	defer cancel()
	ext := strings.ToLower(path.Ext(filename))
	var text string
	var err error
	switch {
	case textExtensions[ext]:
		text, err = utf8Text(data)
	case ext == ".html" || ext == ".htm":
		text, err = htmlText(data)
	case ext == ".pdf":
		text, err = pdfText(ctx, data)
	case ext == ".docx":
		text, err = officeText(ctx, data, func(name string) bool { return name == "word/document.xml" })
	case ext == ".pptx":
		text, err = officeText(ctx, data, func(name string) bool { return slideName.MatchString(name) })
	default:
		return "", &FileError{Code: codeUnsupportedFile, Message: fmt.Sprintf("Files of type %q cannot be indexed; supported: %s.", ext, supportedExtensions)}
	}
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(text) == "" {
		return "", invalidFile("The file contains no text to index.")
	}
	return text, nil
}

// textOut collects a document's text, refusing to hold more than limit
// bytes of it (0: maxExtractedBytes): a document that unpacks or decodes
// to more fails as it is read, before its text is held whole.
type textOut struct {
	strings.Builder
	limit int
}

// room fails the file when n more bytes would pass the limit.
func (o *textOut) room(n int) error {
	limit := cmp.Or(o.limit, maxExtractedBytes)
	if o.Len()+n > limit {
		return tooMuchText(limit)
	}
	return nil
}

func tooMuchText(limit int) *FileError {
	return invalidFile("The file yields more than the %d bytes of text that can be indexed.", limit)
}

func utf8Text(data []byte) (string, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(data) > maxExtractedBytes {
		return "", tooMuchText(maxExtractedBytes)
	}
	if !utf8.Valid(data) {
		return "", invalidFile("The file is not valid UTF-8 text.")
	}
	return string(data), nil
}

// htmlText keeps the text of a page, without scripts and styles, with a
// line break after each block.
func htmlText(data []byte) (string, error) {
	if _, err := utf8Text(data); err != nil {
		return "", err
	}
	z := html.NewTokenizer(bytes.NewReader(data))
	var b textOut
	skip := 0
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if errors.Is(z.Err(), io.EOF) {
				return b.String(), nil
			}
			return "", invalidFile("The HTML could not be read.")
		case html.TextToken:
			if skip == 0 {
				t := z.Text()
				if err := b.room(len(t)); err != nil {
					return "", err
				}
				b.Write(t)
			}
		case html.StartTagToken, html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			switch a {
			case atom.Script, atom.Style, atom.Noscript, atom.Template:
				if tt == html.StartTagToken {
					skip++
				} else if skip > 0 {
					skip--
				}
			case atom.P, atom.Div, atom.Br, atom.Li, atom.Tr, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
				atom.Section, atom.Article, atom.Pre, atom.Blockquote, atom.Table, atom.Title:
				if err := b.room(1); err != nil {
					return "", err
				}
				b.WriteByte('\n')
			}
		}
	}
}

// pdfText reads the text of every page; a malformed PDF may panic the
// reader, which is an invalid file, not a crash. The page tree is walked
// here rather than by the reader's Page(n), which follows a tree that
// lists itself forever and trusts its Count: the walk stops at
// maxPageTreeDepth, maxPDFPages, maxExtractedBytes or when ctx ends.
func pdfText(ctx context.Context, data []byte) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = "", invalidFile("The PDF could not be read.")
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", invalidFile("The PDF is damaged, encrypted or not a PDF.").because(err)
	}
	var b textOut
	pages := 0
	var walk func(node pdf.Value, depth int) error
	walk = func(node pdf.Value, depth int) error {
		if depth > maxPageTreeDepth {
			return invalidFile("The PDF's page tree is deeper than %d levels or lists itself.", maxPageTreeDepth)
		}
		kids := node.Key("Kids")
		for i := 0; i < kids.Len(); i++ {
			if err := ctx.Err(); err != nil {
				return extractionStopped(ctx)
			}
			kid := kids.Index(i)
			switch kid.Key("Type").Name() {
			case "Pages":
				if err := walk(kid, depth+1); err != nil {
					return err
				}
			case "Page":
				if pages++; pages > maxPDFPages {
					return invalidFile("The PDF has more than the %d pages that can be indexed.", maxPDFPages)
				}
				t, err := pdf.Page{V: kid}.GetPlainText(nil)
				if err != nil {
					return invalidFile("The text of page %d of the PDF could not be read.", pages).because(err)
				}
				if err := b.room(len(t)); err != nil {
					return err
				}
				b.WriteString(t)
			}
		}
		return nil
	}
	if err := walk(r.Trailer().Key("Root").Key("Pages"), 0); err != nil {
		return "", err
	}
	return strings.ToValidUTF8(b.String(), ""), nil
}

// extractionStopped is the error of an extraction cut short: by its time
// budget (the file fails), or by the ingestion's end (a stop, a delete).
func extractionStopped(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return invalidFile("Extracting the file's text took longer than %s.", extractTimeout)
	}
	return ctx.Err()
}

var slideName = regexp.MustCompile(`^ppt/slides/slide([0-9]+)\.xml$`)

// officeText reads the text runs (<w:t>, <a:t>) of the parts of an Office
// Open XML document that want picks, in order (slides by number), with a
// line break after each paragraph and a tab for each tab.
func officeText(ctx context.Context, data []byte, want func(name string) bool) (string, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", invalidFile("The document is not a valid Office file (it is not a readable zip archive).").because(err)
	}
	var parts []*zip.File
	for _, f := range zr.File {
		if want(f.Name) {
			parts = append(parts, f)
		}
	}
	if len(parts) == 0 {
		return "", invalidFile("The document has no text part.")
	}
	slices.SortFunc(parts, func(a, b *zip.File) int { return partNumber(a.Name) - partNumber(b.Name) })
	var b textOut
	budget := int64(maxUnpackedBytes)
	elements := maxXMLElements
	for _, f := range parts {
		rc, err := f.Open()
		if err != nil {
			return "", invalidFile("The document's part %s could not be read.", f.Name).because(err)
		}
		lr := &io.LimitedReader{R: rc, N: budget}
		err = xmlRuns(ctx, lr, &b, &elements)
		rc.Close()
		if ctx.Err() != nil {
			return "", extractionStopped(ctx)
		}
		var fe *FileError
		if errors.As(err, &fe) {
			return "", fe
		}
		if err != nil {
			return "", invalidFile("The document's part %s is not valid XML.", f.Name).because(err)
		}
		if budget = lr.N; budget <= 0 {
			return "", invalidFile("The document unpacks to more than %d bytes.", maxUnpackedBytes)
		}
	}
	return b.String(), nil
}

func partNumber(name string) int {
	m := slideName.FindStringSubmatch(name)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// xmlRuns writes the text runs of one XML part to b, failing the file
// when its elements nest deeper than maxXMLDepth or outnumber what is
// left of elements.
func xmlRuns(ctx context.Context, r io.Reader, b *textOut, elements *int) error {
	d := xml.NewDecoder(r)
	inText := false
	depth := 0
	for n := 0; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		var text []byte
		switch t := tok.(type) {
		case xml.StartElement:
			if depth++; depth > maxXMLDepth {
				return invalidFile("The document's XML nests elements deeper than %d levels.", maxXMLDepth)
			}
			if *elements--; *elements < 0 {
				return invalidFile("The document's XML holds more than %d elements.", maxXMLElements)
			}
			switch t.Name.Local {
			case "t":
				inText = true
			case "tab":
				text = tab
			case "br", "cr":
				text = newline
			}
		case xml.EndElement:
			depth--
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				text = newline
			}
		case xml.CharData:
			if inText {
				text = t
			}
		}
		if err := b.room(len(text)); err != nil {
			return err
		}
		b.Write(text)
	}
}

var tab, newline = []byte("\t"), []byte("\n")
