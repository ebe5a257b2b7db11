package providertest

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/nodesdk"
)

// nodeScript is the openai-node client of the suite.
//
//go:embed testdata/provider_sdk.mjs
var nodeScript []byte

// nodeReport is what testdata/provider_sdk.mjs prints.
type nodeReport struct {
	SDK  string `json:"sdk"`
	Chat struct {
		Content      string `json:"content"`
		FinishReason string `json:"finish_reason"`
		Usage        *usage `json:"usage"`
	} `json:"chat"`
	Stream struct {
		Content      string `json:"content"`
		Events       string `json:"events"`
		Chunks       string `json:"chunks"`
		FinishReason string `json:"finish_reason"`
		Usage        *usage `json:"usage"`
	} `json:"stream"`
	Embeddings *struct {
		Default, Float []struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
	} `json:"embeddings"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// nodeToolRound is one tool round trip as the SDK parsed it.
type nodeToolRound struct {
	FinishReason string `json:"finish_reason"`
	Calls        int    `json:"calls"`
	Name         string `json:"name"`
	Arguments    string `json:"arguments"`
	ID           bool   `json:"id"`
	ArgsDone     *struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"args_done"`
	After       string `json:"after"`
	AfterFinish string `json:"after_finish"`
}

// NodeSDK drives the gateway with the official openai-node SDK at each
// pinned version (internal/nodesdk; skipped without it, as there): chat
// plain and streamed, a tool round trip plain and streamed (with the
// provider's ReasoningEffort too, when set), and embeddings when the
// provider serves them; every reply must parse in the SDK to what the
// fake answered.
func (s *Suite) NodeSDK(t *testing.T) {
	for _, sdk := range nodesdk.SDKs(t) {
		t.Run("openai-node-"+sdk.Version, func(t *testing.T) {
			env := map[string]string{"MODELGATE_BASE_URL": s.Base + "/v1", "MODELGATE_API_KEY": ClientKey, "MODELGATE_MODEL": s.P.Model,
				"MODELGATE_TOOL": ToolName, "MODELGATE_TOOL_RESULT": ToolResult, "MODELGATE_REASONING_EFFORT": s.P.ReasoningEffort}
			if s.P.Embeddings {
				env["MODELGATE_EMBEDDING_MODEL"] = EmbeddingModel
			}
			dir := nodesdk.Link(t, map[string]string{"openai": sdk.Package})
			stdout, stderr, err := nodesdk.Run(t, sdk.Node, dir, "provider_sdk.mjs", map[string][]byte{"provider_sdk.mjs": nodeScript}, env)
			if err != nil {
				t.Fatalf("openai-node %s: %v\nstdout:\n%s\nstderr:\n%s", sdk.Version, err, stdout, stderr)
			}
			s.checkNode(t, sdk.Version, stdout)
		})
	}
}

// checkNode checks the script's report against what the fake answers.
func (s *Suite) checkNode(t *testing.T, version, stdout string) {
	t.Helper()
	var r nodeReport
	var rounds map[string]json.RawMessage
	line := []byte(strings.TrimSpace(stdout))
	if err := json.Unmarshal(line, &r); err != nil || json.Unmarshal(line, &rounds) != nil {
		t.Fatalf("the script's report is no JSON: %v\n%s", err, stdout)
	}
	if r.SDK != version {
		t.Fatalf("the script ran openai-node %s, want %s", r.SDK, version)
	}
	wantUsage := usage{PromptTokens, CompletionTokens, PromptTokens + CompletionTokens}
	if r.Chat.Content != Greeting || r.Chat.FinishReason != "stop" || r.Chat.Usage == nil || *r.Chat.Usage != wantUsage {
		t.Errorf("chat: %+v", r.Chat)
	}
	if st := r.Stream; st.Content != Greeting || st.Events != Greeting || st.Chunks != Greeting || st.FinishReason != "stop" || st.Usage == nil || *st.Usage != wantUsage {
		t.Errorf("streamed chat: %+v", st)
	}
	names := []string{"tools", "stream_tools"}
	if s.P.ReasoningEffort != "" {
		names = append(names, "reasoning_tools", "reasoning_stream_tools")
	}
	for _, name := range names {
		var round nodeToolRound
		if err := json.Unmarshal(rounds[name], &round); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		streamed := strings.Contains(name, "stream")
		if round.FinishReason != "tool_calls" || round.Calls != 1 || round.Name != ToolName || round.Arguments != ToolArgs || !round.ID ||
			round.After != AfterTool || round.AfterFinish != "stop" ||
			(streamed && (round.ArgsDone == nil || round.ArgsDone.Name != ToolName || round.ArgsDone.Arguments != ToolArgs)) {
			t.Errorf("%s: %+v", name, round)
		}
	}
	if !s.P.Embeddings {
		return
	}
	if r.Embeddings == nil {
		t.Fatal("no embeddings in the report")
	}
	for format, data := range map[string][]struct {
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	}{"default (base64)": r.Embeddings.Default, "float": r.Embeddings.Float} {
		if len(data) != 2 {
			t.Fatalf("embeddings %s: %d vectors", format, len(data))
		}
		for i, d := range data {
			if d.Index != i || fmt.Sprint(d.Embedding) != fmt.Sprint(Embedding(i)) {
				t.Errorf("embeddings %s: vector %d = %d %v, want %v", format, i, d.Index, d.Embedding, Embedding(i))
			}
		}
	}
}
