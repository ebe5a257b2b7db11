package observability

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestDashboardShowsStoreSizeAndIngestion: the dashboard shows the local
// store's size, exactly the bytes of its database files and file contents
// on disk (in the cell's title, the same bytes human-readable in it), and
// beside an ingestion held by its embeddings provider the vector store's
// file counts: one completed, one in progress, of two.
func TestDashboardShowsStoreSizeAndIngestion(t *testing.T) {
	fake := &gatewaytest.FakeEmbeddings{Mode: "ok", Arrived: make(chan struct{}, 1)}
	srv := httptest.NewServer(fake)
	defer func() {
		srv.CloseClientConnections() // the held ingestion's request
		srv.Close()
	}()
	dir := t.TempDir()
	base := gatewaytest.StartWithEmbeddings(t, "data_dir "+dir, srv.URL)
	client := gatewaytest.SDK(base)
	ctx := context.Background()
	vs, err := client.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("manuals")})
	if err != nil {
		t.Fatal(err)
	}
	done := gatewaytest.Upload(t, client, "done.txt", []byte(strings.Repeat("The cat sleeps on the warm windowsill. ", 2000)))
	if f := gatewaytest.AttachAndPoll(t, client, vs.ID, done, nil); f.Status != "completed" {
		t.Fatalf("first ingestion: %+v", f)
	}
	fake.SetMode("hang")
	held := gatewaytest.Upload(t, client, "held.txt", []byte("The dog waits by the door for the whole evening."))
	if _, err := client.VectorStores.Files.New(ctx, vs.ID, openai.VectorStoreFileNewParams{FileID: held}); err != nil {
		t.Fatal(err)
	}
	<-fake.Arrived // the held file's embeddings call

	before := diskBytes(t, dir)
	page := getOK(t, base+"/dashboard")
	after := diskBytes(t, dir)
	m := regexp.MustCompile(`<tr data-store="local"><td>local</td><td class="n size" title="(\d+) bytes">([^<]+)</td>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no size of the store local on the dashboard:\n%s", page)
	}
	shown, _ := strconv.ParseInt(m[1], 10, 64)
	if shown < min(before, after) || shown > max(before, after) {
		t.Errorf("store size shown %d bytes (%s); on disk %d before the page, %d after", shown, m[2], before, after)
	}
	if want := fmt.Sprintf("%.1f KiB", float64(shown)/1024); shown < 1000<<10 && m[2] != want {
		t.Errorf("store size shown as %q, want %q", m[2], want)
	}
	row := regexp.MustCompile(`<tr data-vector-store="` + vs.ID + `">.*?</tr>`).FindString(page)
	for _, want := range []string{`<td>manuals</td>`, `"n completed">1<`, `"n in-progress">1<`, `"n failed">0<`, `"n total">2<`} {
		if !strings.Contains(row, want) {
			t.Errorf("vector store row %q lacks %s", row, want)
		}
	}
}

// diskBytes is what the SQLite store in dir takes: its database files and
// the files' contents.
func diskBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	for _, name := range []string{"modelgate.db", "modelgate.db-wal", "modelgate.db-shm"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
			n += fi.Size()
		} else if !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	err := filepath.WalkDir(filepath.Join(dir, "files"), func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		n += fi.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDashboardStoreSizeUnknown: a local store that cannot be reached (a
// PostgreSQL server that is not there) has its size shown as unknown,
// why in the title, and the page is served.
func TestDashboardStoreSizeUnknown(t *testing.T) {
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		upstream gone local {
			postgres "postgres://modelgate@127.0.0.1:%d/modelgate?connect_timeout=1"
		}
		route files.create to gone
		dashboard /dashboard
	}`, gatewaytest.ClientKey, testgateway.FreePort(t)))
	page := getOK(t, base+"/dashboard")
	if !regexp.MustCompile(`<tr data-store="gone"><td>gone</td><td class="n size bad" title="[^"]+">unknown</td>`).MatchString(page) {
		t.Errorf("no unknown size of the unreachable store gone on the dashboard:\n%s", page)
	}
}
