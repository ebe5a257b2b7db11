package local

import (
	"mime/multipart"
	"strings"
	"testing"
)

// TestUploadFilenameUndoesFormEscapes: a filename arrives as the client
// wrote it, whether its quotes were escaped the HTML standard's way
// (%22, as openai-node and openai-python send) or as a quoted-string
// (\", as openai-go sends).
func TestUploadFilenameUndoesFormEscapes(t *testing.T) {
	for header, want := range map[string]string{
		`form-data; name="file"; filename="b %22quoted%22.bin"`: `b "quoted".bin`,
		`form-data; name="file"; filename="b \"quoted\".bin"`:   `b "quoted".bin`,
		`form-data; name="file"; filename="two%0D%0Alines.txt"`: "two\r\nlines.txt",
		`form-data; name="file"; filename="50%25 off.txt"`:      "50%25 off.txt",
		`form-data; name="file"; filename="c-é.bin"`:            "c-é.bin",
	} {
		body := "--B\r\nContent-Disposition: " + header + "\r\n\r\nx\r\n--B--\r\n"
		part, err := multipart.NewReader(strings.NewReader(body), "B").NextPart()
		if err != nil {
			t.Fatalf("%s: %v", header, err)
		}
		if got := uploadFilename(part); got != want {
			t.Errorf("%s: filename %q, want %q", header, got, want)
		}
	}
}
