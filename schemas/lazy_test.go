package schemas

import (
	"io/fs"
	"os"
	"os/exec"
	"testing"

	"github.com/modelgate/modelgate/internal/liveheap"
)

// TestEverySchemaCompiles: each embedded schema compiles (they compile
// on first use, so a broken one would otherwise show only on its
// operation's first request).
func TestEverySchemaCompiles(t *testing.T) {
	names, err := fs.Glob(files, "*.json")
	if err != nil || len(names) < 50 {
		t.Fatalf("%d schemas: %v", len(names), err)
	}
	mustLoad()
	for _, name := range names {
		if _, err := compile(name); err != nil {
			t.Error(err)
		}
	}
}

// TestSchemasCompileOnFirstUse: validating a chat request reads and
// compiles the chat request's schema (and what it refers to), not the 70
// others, and the heap it holds afterwards stays far below the whole
// set's. Run in a process of its own, where nothing was compiled before.
func TestSchemasCompileOnFirstUse(t *testing.T) {
	if os.Getenv("SCHEMAS_FIRST_USE") == "" {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestSchemasCompileOnFirstUse$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SCHEMAS_FIRST_USE=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	before := liveheap.Bytes()
	if _, v := ValidateRequest("chat.completions.create", []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)); v != nil {
		t.Fatal(v.Message)
	}
	held := liveheap.Bytes() - before
	n := 0
	set.compiled.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Errorf("%d schemas compiled for one chat request, want 1", n)
	}
	t.Logf("one chat request's validation holds %d KiB of heap", held>>10)
	if held > 700<<10 {
		t.Errorf("one chat request's validation holds %d KiB of heap, want at most 700 (all of them decoded and compiled: about 1,050)", held>>10)
	}
}
