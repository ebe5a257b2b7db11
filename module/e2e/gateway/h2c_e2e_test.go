package gateway

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestH2CIsRefusedUnderProtocolsH1: Caddy's default protocols serve
// cleartext HTTP/2 with prior knowledge on a plain http:// listener; with
// the global option `servers { protocols h1 }` the same request is
// refused, and HTTP/1.1 is served as before.
func TestH2CIsRefusedUnderProtocolsH1(t *testing.T) {
	h2c := new(http.Protocols)
	h2c.SetUnencryptedHTTP2(true)
	priorKnowledge := &http.Client{Transport: &http.Transport{Protocols: h2c}}
	t.Cleanup(priorKnowledge.CloseIdleConnections)
	chat := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`
	post := func(c *http.Client, url string) (*http.Response, error) {
		req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(chat))
		for k, v := range gatewaytest.ChatHeaders {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return resp, err
	}
	for _, c := range []struct {
		name, servers string
		h2c           bool
	}{
		{"default protocols", "", true},
		{"protocols h1", "\tservers {\n\t\tprotocols h1\n\t}\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			port := testgateway.FreePort(t)
			global := strings.Replace(testgateway.GlobalOptions, "\tadmin off\n", "\tadmin off\n"+c.servers, 1)
			testgateway.Load(t, fmt.Sprintf("%shttp://127.0.0.1:%d {\n\tmodelgate {\n\t\tkey %s\n\t\troute * to reference\n\t}\n}\n", global, port, gatewaytest.ClientKey))
			url := fmt.Sprintf("http://127.0.0.1:%d", port)
			resp, err := post(priorKnowledge, url)
			switch {
			case c.h2c && (err != nil || resp.StatusCode != 200 || resp.ProtoMajor != 2):
				t.Fatalf("h2c with prior knowledge: %v %v", resp, err)
			case !c.h2c && err == nil:
				t.Fatalf("h2c with prior knowledge was served: %s %d", resp.Proto, resp.StatusCode)
			case !c.h2c:
				t.Logf("h2c with prior knowledge: %v", err)
			}
			if resp, err := post(http.DefaultClient, url); err != nil || resp.StatusCode != 200 || resp.ProtoMajor != 1 {
				t.Fatalf("HTTP/1.1: %v %v", resp, err)
			}
		})
	}
}
