package gatewaytest

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/testgateway"
)

// OtherKey is the client key of a second owner in StartLocal's gateway.
const OtherKey = "sk-other-owner-key-0004"

// StartLocal serves modelgate on its built-in defaults with two keys of
// different owners.
func StartLocal(t *testing.T, dataDir string) string {
	return StartLocalOn(t, "data_dir "+dataDir)
}

// StartLocalOn is StartLocal with the local upstream's store given as its
// option line (`data_dir <path>` or `postgres <dsn>`).
func StartLocalOn(t *testing.T, store string) string {
	return testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s {
			owner alice
		}
		key %s {
			owner bob
		}
		upstream local local {
			%s
		}
	}`, ClientKey, OtherKey, store))
}

// FileContent downloads a file's content.
func FileContent(t *testing.T, client openai.Client, id string) []byte {
	t.Helper()
	resp, err := client.Files.Content(context.Background(), id)
	if err != nil {
		t.Fatalf("content of %s: %v", id, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading content of %s: %v", id, err)
	}
	return body
}
