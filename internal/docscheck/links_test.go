// Package docscheck holds the README and docs/ to the project's rules: every
// link stays in the repository or goes to a public site, every link inside
// the repository names a file that exists (and an anchor that a heading
// makes), and the README's set-up block is exactly two commands.
package docscheck

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const root = "../.."

var (
	linkPattern    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingPattern = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	codeFence      = regexp.MustCompile("(?s)```.*?```")
)

// documents lists README.md and every Markdown file under docs/.
func documents(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("docs/ has no Markdown files")
	}
	return append([]string{filepath.Join(root, "README.md")}, docs...)
}

// anchors returns the GitHub-style anchors of a Markdown file's headings.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range headingPattern.FindAllStringSubmatch(codeFence.ReplaceAllString(text, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9'):
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}

func TestDocLinksStayInTheRepositoryOrArePublic(t *testing.T) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range documents(t) {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkPattern.FindAllStringSubmatch(string(data), -1) {
			link := m[1]
			u, err := url.Parse(link)
			if err != nil {
				t.Errorf("%s: link %q does not parse: %v", doc, link, err)
				continue
			}
			if u.Scheme != "" {
				if u.Scheme != "https" && u.Scheme != "http" {
					t.Errorf("%s: link %q is neither in the repository nor a public site", doc, link)
				} else if h := u.Hostname(); h == "localhost" || strings.HasPrefix(h, "127.") || h == "::1" {
					t.Errorf("%s: link %q points at this machine", doc, link)
				}
				continue
			}
			target := filepath.Join(filepath.Dir(doc), u.Path)
			if u.Path == "" {
				target = doc
			}
			abs, err := filepath.Abs(target)
			if err != nil {
				t.Fatal(err)
			}
			if abs != absRoot && !strings.HasPrefix(abs, absRoot+string(filepath.Separator)) {
				t.Errorf("%s: link %q leaves the repository", doc, link)
				continue
			}
			info, err := os.Stat(abs)
			if err != nil {
				t.Errorf("%s: link %q names no file in the repository", doc, link)
				continue
			}
			if u.Fragment != "" && !info.IsDir() && strings.HasSuffix(abs, ".md") {
				text, err := os.ReadFile(abs)
				if err != nil {
					t.Fatal(err)
				}
				if !anchors(string(text))[u.Fragment] {
					t.Errorf("%s: link %q names no heading of %s", doc, link, filepath.Base(abs))
				}
			}
		}
	}
}

func TestReadmeHasExactlyTwoSetUpCommands(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "## Set up")
	if i < 0 {
		t.Fatal("README.md has no `## Set up` section")
	}
	block := codeFence.FindString(text[i:])
	var commands []string
	for _, line := range strings.Split(block, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "```") {
			commands = append(commands, line)
		}
	}
	if len(commands) != 2 || !strings.HasPrefix(commands[0], "go run ./module/cmd/caddy run --config caddyfiles/quickstart.Caddyfile") ||
		!strings.HasPrefix(commands[1], "bash scripts/test.sh") {
		t.Fatalf("README's set-up block is not the two commands (start the gateway, run the suite): %q", commands)
	}
}
