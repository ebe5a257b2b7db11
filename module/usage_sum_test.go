package modelgate

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestUsageSumsSaturate: a reply's prompt and input (completion and
// output) token counts whose sum passes the int64 range are read as the
// largest count, from the bytes and from the decoded document alike,
// never wrapped negative.
func TestUsageSumsSaturate(t *testing.T) {
	const reply = `{"usage":{"prompt_tokens":9000000000000000000,"input_tokens":9000000000000000000,"completion_tokens":9223372036854775807,"output_tokens":1,"total_tokens":5}}`
	dec := json.NewDecoder(strings.NewReader(reply))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	for name, u := range map[string]*usage{"bytes": readUsage(gjson.Get(reply, "usage")), "document": docUsage(doc)} {
		if u.prompt != math.MaxInt64 || u.completion != math.MaxInt64 || u.total != 5 {
			t.Errorf("%s: %+v", name, u)
		}
	}
}
