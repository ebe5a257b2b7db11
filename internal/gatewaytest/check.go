package gatewaytest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testgateway"
)

// ReadRecords waits (boundedly) until the recorder has written n records.
func ReadRecords(t *testing.T, path string, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var out []map[string]any
		if f, err := os.Open(path); err == nil {
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 16<<20)
			for sc.Scan() {
				var rec map[string]any
				if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
					t.Fatalf("record is not JSON: %v", err)
				}
				out = append(out, rec)
			}
			f.Close()
		}
		if len(out) >= n || time.Now().After(deadline) {
			if len(out) < n {
				t.Fatalf("%d records written, want %d", len(out), n)
			}
			return out
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// CheckGateway serves modelgate over the provider at providerURL with
// response_check mode and records to recordPath.
func CheckGateway(t *testing.T, providerURL, mode, recordPath string) string {
	return testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		response_check %s
		record %s
		upstream p {
			base_url %s/v1
		}
	}`, ClientKey, mode, recordPath, providerURL))
}

// ChatJSON is a minimal chat completion request body.
const ChatJSON = `{"model":"gpt-4o","messages":[{"role":"user","content":"x"}]}`

// ChatHeaders are the headers of a JSON request with the client key.
var ChatHeaders = map[string]string{"Authorization": "Bearer " + ClientKey, "Content-Type": "application/json"}

// Pairs17 is a JSON object of 17 string members (one over the metadata limit).
func Pairs17() string {
	var kv []string
	for i := 0; i < 17; i++ {
		kv = append(kv, fmt.Sprintf(`"k%d":"v"`, i))
	}
	return "{" + strings.Join(kv, ",") + "}"
}
