package hostile

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testdocs"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestHostileDeepDOCXFailsInBoundedMemory: four .docx files of 10 million
// nested elements (90 KB each; one took 1.85 GB to ingest) attached at
// once each fail with a last_error naming the depth limit, a .txt attached
// with them completes, the gateway process's peak memory stays within
// 256 MiB of the idle gateway, and the gateway serves afterwards and stops
// on SIGTERM.
func TestHostileDeepDOCXFailsInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a gateway process")
	}
	port := testgateway.FreePort(t)
	child := gatewaytest.StartChildWith(t, "data_dir "+t.TempDir(), "", port)
	pid := child.Cmd.Process.Pid
	client := gatewaytest.SDK(child.Base)
	ctx := context.Background()
	deep := testdocs.DOCXDeep(10_000_000)
	var ids []string
	for i := range 4 {
		ids = append(ids, gatewaytest.Upload(t, client, fmt.Sprintf("deep%d.docx", i), deep))
	}
	text := gatewaytest.Upload(t, client, "plain.txt", []byte("an ordinary file about herons"))
	idle, cpu := gatewaytest.PeakRSS(t, pid), cpuTime(t, pid)
	vs, err := client.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("deep"), FileIDs: append(ids, text)})
	if err != nil {
		t.Fatal(err)
	}
	for range 3000 {
		files := gatewaytest.ListStoreFiles(t, client, vs.ID)
		if files[text].Status == openai.VectorStoreFileStatusInProgress || !allDone(files, ids) {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		for _, id := range ids {
			if files[id].Status != "failed" || files[id].LastError.Code != "invalid_file" || !strings.Contains(files[id].LastError.Message, "deeper than 256 levels") {
				t.Fatalf("deep docx: %+v", files[id])
			}
		}
		if files[text].Status != "completed" {
			t.Fatalf("text file: %+v", files[text])
		}
		peak, used := gatewaytest.PeakRSS(t, pid), cpuTime(t, pid)-cpu
		t.Logf("idle %d MiB, peak %d MiB (+%d MiB), CPU %v", idle>>20, peak>>20, (peak-idle)>>20, used)
		if peak-idle > 256<<20 || used > maxAttackCPU {
			t.Fatalf("peak RSS +%d MiB over the idle gateway, %v of CPU", (peak-idle)>>20, used)
		}
		if resp, _ := gatewaytest.RawRequest(t, "GET", child.Base+"/v1/vector_stores/"+vs.ID, "", map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey}); resp.StatusCode != 200 {
			t.Fatalf("after the ingestion: %d", resp.StatusCode)
		}
		child.StopsOnSIGTERM(t)
		return
	}
	t.Fatal("ingestion never finished")
}

// allDone reports whether none of the files ids is still in progress.
func allDone(files map[string]openai.VectorStoreFile, ids []string) bool {
	for _, id := range ids {
		if files[id].Status == openai.VectorStoreFileStatusInProgress {
			return false
		}
	}
	return true
}
