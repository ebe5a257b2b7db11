package admission

import (
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestEmbeddingsTokenArraysAreEstimated: embeddings of token arrays are
// charged their tokens on admission, as strings are. A key of tpm 1000 is
// refused one token array of 1001 tokens (429, type tokens) and admitted
// one of 1000, which leaves it 0; the same for an array of token arrays
// (250, 250, 250 and 251 tokens against four of 250).
func TestEmbeddingsTokenArraysAreEstimated(t *testing.T) {
	keys := []string{"sk-one-token-array-00001", "sk-token-arrays-00000001"}
	base := testgateway.Quickstart(t, "key "+keys[0]+" {\n owner dev\n tpm 1000\n }\nkey "+keys[1]+" {\n owner dev\n tpm 1000\n }\n")
	ids := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("1820,", n), ",") + "]" }
	arrays := func(ns ...int) string {
		var parts []string
		for _, n := range ns {
			parts = append(parts, ids(n))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	for i, c := range []struct{ over, at string }{
		{ids(1001), ids(1000)},
		{arrays(250, 250, 250, 251), arrays(250, 250, 250, 250)},
	} {
		h := map[string]string{"Authorization": "Bearer " + keys[i], "Content-Type": "application/json"}
		resp, env := gatewaytest.RawRequest(t, "POST", base+"/v1/embeddings", `{"model":"text-embedding-3-small","input":`+c.over+`}`, h)
		if resp.StatusCode != 429 || env.Error.Type != "tokens" {
			t.Fatalf("%s: 1001 tokens on a key of 1000: %d %+v", keys[i], resp.StatusCode, env.Error)
		}
		resp, _ = gatewaytest.RawRequest(t, "POST", base+"/v1/embeddings", `{"model":"text-embedding-3-small","input":`+c.at+`}`, h)
		if left := resp.Header.Get("X-Ratelimit-Remaining-Tokens"); resp.StatusCode != 200 || left != "0" {
			t.Fatalf("%s: 1000 tokens on a key of 1000: %d, %q tokens left: %s", keys[i], resp.StatusCode, left, gatewaytest.LastBody)
		}
	}
}

// TestResponseEstimateSaturates: max_output_tokens above 2^31-1 is a 400
// naming it (as max_tokens is for chat), and a response's estimate (its
// input and max_output_tokens) saturates instead of wrapping negative: the
// largest allowed, 2^31-1, is more than a key of tpm 1000 can ever have
// (429, type tokens). None of them takes anything from the key, which
// then admits a response of its size.
func TestResponseEstimateSaturates(t *testing.T) {
	const key = "sk-response-estimate-0001"
	base := testgateway.Quickstart(t, "key "+key+" {\n owner dev\n tpm 1000\n }\n")
	h := map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}
	for _, c := range []struct {
		max    string
		status int
	}{{"9223372036854775807", 400}, {"1e300", 400}, {"2147483648", 400}, {"2147483647", 429}} {
		resp, env := gatewaytest.RawRequest(t, "POST", base+"/v1/responses", `{"model":"reference","input":"hi","max_output_tokens":`+c.max+`}`, h)
		if resp.StatusCode != c.status || (c.status == 400) != (env.Error.Param != nil && *env.Error.Param == "max_output_tokens") ||
			(c.status == 429) != (env.Error.Type == "tokens") {
			t.Fatalf("max_output_tokens %s: %d %s", c.max, resp.StatusCode, gatewaytest.LastBody)
		}
	}
	resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/responses", `{"model":"reference","input":"hi","max_output_tokens":900}`, h)
	if resp.StatusCode != 200 {
		t.Fatalf("max_output_tokens 900 on a full key of 1000: %d %s", resp.StatusCode, gatewaytest.LastBody)
	}
}
