package modelgate

import (
	"context"
	"fmt"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// storeView is a local store's size on the dashboard: Size human-readable,
// Bytes exact; Size "unknown" when it could not be read (Error says why).
type storeView struct {
	Name, Size, Error string
	Bytes             int64
}

// vectorStoreView is a vector store with files being ingested: its file
// counts by status.
type vectorStoreView struct {
	Store, ID, Name                                 string
	Completed, InProgress, Failed, Cancelled, Total int64
}

// storeSize reads the size of the store of the local upstream name once.
func storeSize(ctx context.Context, name string, src progressSource) storeView {
	n, err := src.StoreSize(ctx)
	if err != nil {
		return storeView{Name: name, Size: "unknown", Error: err.Error()}
	}
	return storeView{Name: name, Size: byteSize(n), Bytes: n}
}

func vectorStoreViews(name string, stores []store.VectorStore) []vectorStoreView {
	out := make([]vectorStoreView, 0, len(stores))
	for _, vs := range stores {
		c := vs.FileCounts
		out = append(out, vectorStoreView{Store: name, ID: vs.ID, Name: vs.Name, Completed: c.Completed,
			InProgress: c.InProgress, Failed: c.Failed, Cancelled: c.Cancelled, Total: c.Total})
	}
	return out
}

// byteSize writes n bytes in binary units: 512 B, 1.5 KiB, 20.0 MiB.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit-0.05 && i < 5 { // one that would round to 1024.0 is the next unit's 1.0
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[i])
}
