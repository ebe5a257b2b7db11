package vectorstores

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/testdocs"
	"github.com/modelgate/modelgate/upstreams/tokens"
)

func TestChunkTextWindows(t *testing.T) {
	enc := tokens.ForModel("")
	var b strings.Builder
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&b, "Sentence number %d talks about naïve café ünïcode. ", i)
	}
	text := strings.TrimSpace(b.String()) // a final window of a blank alone would be left out
	chunks, err := chunkText(enc, text, 100, 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 2 {
		t.Fatalf("%d chunks", len(chunks))
	}
	pos := 0
	for i, c := range chunks {
		if n := enc.Count(c); n > 101 { // a window re-encoded may merge across its cut by one token at most
			t.Fatalf("chunk %d has %d tokens, want at most 100", i, n)
		}
		at := strings.Index(text[pos:], c)
		if at < 0 {
			t.Fatalf("chunk %d is not a slice of the text at or after the previous one", i)
		}
		pos += at + 1
	}
	if !strings.HasSuffix(text, chunks[len(chunks)-1]) || !strings.HasPrefix(text, chunks[0]) {
		t.Fatal("the chunks do not cover the text's ends")
	}
	// Overlap: consecutive windows share text.
	if !strings.Contains(text, chunks[0]) || !strings.Contains(chunks[0], chunks[1][:20]) {
		t.Fatalf("windows 0 and 1 do not overlap:\n%q\n%q", chunks[0], chunks[1])
	}
	// Without overlap the windows tile the text exactly.
	tiles, err := chunkText(enc, text, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(tiles, "") != text {
		t.Fatal("chunks without overlap do not concatenate back to the text")
	}
}

func TestExtractText(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		want []string
		code string
	}{
		{"a.txt", []byte("\xef\xbb\xbfplain words"), []string{"plain words"}, ""},
		{"a.md", []byte("# Title\n\nbody"), []string{"# Title", "body"}, ""},
		{"main.go", []byte("package main // gopher"), []string{"gopher"}, ""},
		{"d.csv", []byte("a,b\n1,2"), []string{"a,b"}, ""},
		{"p.html", []byte("<html><head><style>x{}</style><script>var hidden=1</script></head><body><p>Visible <b>bold</b></p><div>next</div></body></html>"),
			[]string{"Visible bold", "next"}, ""},
		{"d.pdf", testdocs.PDF("The quick brown fox (yes)", "second line"), []string{"The quick brown fox (yes)", "second line"}, ""},
		{"d.docx", testdocs.DOCX("First paragraph & more", "Second"), []string{"First paragraph & more\nSecond"}, ""},
		{"s.pptx", testdocs.PPTX("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven"),
			[]string{"one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven"}, ""},
		{"image.png", []byte("\x89PNG\r\n"), nil, codeUnsupportedFile},
		{"noext", []byte("text"), nil, codeUnsupportedFile},
		{"bad.txt", []byte("\xff\xfe\x00bad"), nil, codeInvalidFile},
		{"empty.md", []byte("  \n "), nil, codeInvalidFile},
		{"broken.pdf", []byte("%PDF-1.4 not really"), nil, codeInvalidFile},
		{"broken.docx", []byte("PK not a zip"), nil, codeInvalidFile},
		// Extraction that would never end: a page tree that lists itself,
		// a page count of two billion (read as the one page there is:
		// no text).
		{"cyclic.pdf", testdocs.CyclicPDF(), nil, codeInvalidFile},
		{"huge-count.pdf", testdocs.HugeCountPDF(), nil, codeInvalidFile},
	}
	ourWords := map[string]string{
		"broken.pdf":  "The PDF is damaged, encrypted or not a PDF.",
		"broken.docx": "The document is not a valid Office file (it is not a readable zip archive).",
	}
	for _, c := range cases {
		text, err := extractText(context.Background(), c.name, c.data)
		var fe *FileError
		if c.code != "" {
			if !errors.As(err, &fe) || fe.Code != c.code {
				t.Errorf("%s: error %v, want code %s", c.name, err, c.code)
			}
			// last_error is ours, never a parser's text.
			if want, ok := ourWords[c.name]; ok && (fe == nil || fe.Message != want || fe.Cause == nil) {
				t.Errorf("%s: %+v, want the message %q with the library's error kept apart", c.name, fe, want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: text %q lacks %q", c.name, text, w)
			}
		}
		if strings.Contains(text, "hidden") {
			t.Errorf("%s: script text kept: %q", c.name, text)
		}
	}
}

func TestSearchFilterOperators(t *testing.T) {
	attrs := map[string]any{"author": "ann", "year": float64(2023), "draft": false}
	cases := []struct {
		filter string
		want   bool
	}{
		{`{"type":"eq","key":"author","value":"ann"}`, true},
		{`{"type":"eq","key":"author","value":"bob"}`, false},
		{`{"type":"ne","key":"author","value":"bob"}`, true},
		{`{"type":"ne","key":"missing","value":"x"}`, true},
		{`{"type":"eq","key":"missing","value":"x"}`, false},
		{`{"type":"eq","key":"year","value":"2023"}`, false},
		{`{"type":"gt","key":"year","value":2022}`, true},
		{`{"type":"gte","key":"year","value":2023}`, true},
		{`{"type":"lt","key":"year","value":2023}`, false},
		{`{"type":"lte","key":"year","value":2023.5}`, true},
		{`{"type":"eq","key":"draft","value":false}`, true},
		{`{"type":"in","key":"author","value":["bob","ann"]}`, true},
		{`{"type":"nin","key":"author","value":["bob","ann"]}`, false},
		{`{"type":"in","key":"year","value":[2021,2023]}`, true},
		{`{"type":"nin","key":"missing","value":["x"]}`, true},
		{`{"type":"eq","key":"file_id","value":"file-1"}`, true},
		{`{"type":"and","filters":[{"type":"eq","key":"author","value":"ann"},{"type":"gt","key":"year","value":2024}]}`, false},
		{`{"type":"or","filters":[{"type":"eq","key":"author","value":"bob"},{"type":"gt","key":"year","value":2020}]}`, true},
		{`{"type":"and","filters":[{"type":"or","filters":[{"type":"eq","key":"author","value":"x"},{"type":"eq","key":"draft","value":false}]},{"type":"lt","key":"year","value":2030}]}`, true},
	}
	for _, c := range cases {
		var f searchFilter
		if err := json.Unmarshal([]byte(c.filter), &f); err != nil {
			t.Fatal(err)
		}
		if got := f.match("file-1", attrs); got != c.want {
			t.Errorf("%s: %v, want %v", c.filter, got, c.want)
		}
	}
}

func TestFuseScoresAndTies(t *testing.T) {
	text := rankedList{{ID: 3, Score: 1}, {ID: 1, Score: 0.5}, {ID: 2, Score: 0.5}}
	vec := rankedList{{ID: 1, Score: 0.9}, {ID: 3, Score: 0.8}}
	fused := fuse([]rankedList{text, vec}, true)
	if fused[0].ID != 1 && fused[0].ID != 3 || fused[0].Score > 1 || fused[len(fused)-1].Score <= 0 {
		t.Fatalf("fused %+v", fused)
	}
	// Chunks 1 and 3 are first and second once each: a tie, broken by ID.
	if fused[0].ID != 1 || fused[1].ID != 3 || fused[0].Score != fused[1].Score {
		t.Fatalf("tie not broken by ID: %+v", fused)
	}
	alone := fuse([]rankedList{text}, true)
	if alone[0].ID != 3 || alone[0].Score != 1 {
		t.Fatalf("the best of one list should score 1: %+v", alone)
	}
	raw := fuse([]rankedList{text, vec}, false)
	if raw[0].ID != 3 || raw[0].Score != 1 || raw[1].ID != 1 || raw[1].Score != 0.9 {
		t.Fatalf("ranker none keeps each chunk's best score: %+v", raw)
	}
}
