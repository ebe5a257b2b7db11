package local

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Codes of a vector store file's last_error.
const (
	codeUnsupportedFile = "unsupported_file"
	codeInvalidFile     = "invalid_file"
	codeServerError     = "server_error"
)

// fileError is why a file cannot be indexed; it becomes the attachment's
// last_error.
type fileError struct{ code, message string }

func (e *fileError) Error() string { return e.code + ": " + e.message }

func invalidFile(format string, args ...any) *fileError {
	return &fileError{code: codeInvalidFile, message: fmt.Sprintf(format, args...)}
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

// extractText returns the text of a file, chosen by its extension.
func extractText(filename string, data []byte) (string, error) {
	ext := strings.ToLower(path.Ext(filename))
	var text string
	var err error
	switch {
	case textExtensions[ext]:
		text, err = utf8Text(data)
	case ext == ".html" || ext == ".htm":
		text, err = htmlText(data)
	case ext == ".pdf":
		text, err = pdfText(data)
	case ext == ".docx":
		text, err = officeText(data, func(name string) bool { return name == "word/document.xml" })
	case ext == ".pptx":
		text, err = officeText(data, func(name string) bool { return slideName.MatchString(name) })
	default:
		return "", &fileError{code: codeUnsupportedFile, message: fmt.Sprintf("Files of type %q cannot be indexed; supported: %s.", ext, supportedExtensions)}
	}
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(text) == "" {
		return "", invalidFile("The file contains no text to index.")
	}
	return text, nil
}

func utf8Text(data []byte) (string, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
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
	var b strings.Builder
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
				b.Write(z.Text())
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
				b.WriteByte('\n')
			}
		}
	}
}

// pdfText reads the text of every page; a malformed PDF may panic the
// reader, which is an invalid file, not a crash.
func pdfText(data []byte) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = "", invalidFile("The PDF could not be read.")
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", invalidFile("The PDF could not be read: %s.", err.Error())
	}
	rd, err := r.GetPlainText()
	if err != nil {
		return "", invalidFile("The PDF's text could not be read: %s.", err.Error())
	}
	var b strings.Builder
	if _, err := io.Copy(&b, rd); err != nil {
		return "", invalidFile("The PDF's text could not be read: %s.", err.Error())
	}
	return strings.ToValidUTF8(b.String(), ""), nil
}

var slideName = regexp.MustCompile(`^ppt/slides/slide([0-9]+)\.xml$`)

// officeText reads the text runs (<w:t>, <a:t>) of the parts of an Office
// Open XML document that want picks, in order (slides by number), with a
// line break after each paragraph and a tab for each tab.
func officeText(data []byte, want func(name string) bool) (string, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", invalidFile("The document is not a valid Office file: %s.", err.Error())
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
	var b strings.Builder
	budget := int64(maxUnpackedBytes)
	for _, f := range parts {
		rc, err := f.Open()
		if err != nil {
			return "", invalidFile("The document's part %s could not be read.", f.Name)
		}
		lr := &io.LimitedReader{R: rc, N: budget}
		err = xmlRuns(lr, &b)
		rc.Close()
		if err != nil {
			return "", invalidFile("The document's part %s is not valid XML.", f.Name)
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

func xmlRuns(r io.Reader, b *strings.Builder) error {
	d := xml.NewDecoder(r)
	inText := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "t":
				inText = true
			case "tab":
				b.WriteByte('\t')
			case "br", "cr":
				b.WriteByte('\n')
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				b.WriteByte('\n')
			}
		case xml.CharData:
			if inText {
				b.Write(t)
			}
		}
	}
}
