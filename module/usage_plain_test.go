package modelgate

import (
	"encoding/json"
	"testing"

	"github.com/tidwall/gjson"
)

// plainUsageCases are usage objects as providers write them, and the edges
// of what plainUsage takes: each is valid JSON.
var plainUsageCases = []string{
	`{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`,
	`{ "prompt_tokens" : 7 , "completion_tokens" : 3 , "total_tokens" : 10 , "prompt_tokens_details" : { "cached_tokens" : 5 } }`,
	`{"input_tokens":12,"output_tokens":30,"input_tokens_details":{"cached_tokens":4},"output_tokens_details":{"reasoning_tokens":8}}`,
	`{"prompt_tokens":1,"prompt_tokens":2,"completion_tokens":null,"total_tokens":-4}`,
	`{"prompt_tokens_details":{"cached_tokens":3,"cached_tokens":9},"prompt_tokens_details":{"cached_tokens":5}}`,
	`{"prompt_tokens_details":null,"completion_tokens_details":{}}`,
	`{"prompt_tokens":999999999999999999,"completion_tokens":-999999999999999999}`,
	`{}`,
	// Those plainUsage leaves to gjson:
	`{"prompt_tokens":1000000000000000000}`,
	`{"prompt_tokens":1.5,"completion_tokens":2e3}`,
	`{"prompt_tokens":"12"}`,
	`{"prompt\u005ftokens":12}`,
	`{"prompt_tokens_details":7}`,
	`{"prompt_tokens_details":{"cached_tokens":[1]}}`,
	`{"prompt_tokens":12,"other":{"x":1}}`,
	`{"prompt_tokens":true}`,
}

// TestPlainUsageIsReadUsage: plainUsage reads what readUsage (gjson)
// reads of every usage it takes, and takes the usage of chat completions
// as providers write it.
func TestPlainUsageIsReadUsage(t *testing.T) {
	for i, c := range plainUsageCases {
		if !json.Valid([]byte(c)) {
			t.Fatalf("case %d is not JSON: %s", i, c)
		}
		checkPlainUsage(t, []byte(c))
	}
	for _, c := range plainUsageCases[:8] {
		if _, ok := plainUsage([]byte(c)); !ok {
			t.Errorf("plainUsage left %s to gjson", c)
		}
	}
	for _, c := range plainUsageCases[8:] {
		if _, ok := plainUsage([]byte(c)); ok {
			t.Errorf("plainUsage took %s", c)
		}
	}
}

func checkPlainUsage(t *testing.T, b []byte) {
	t.Helper()
	want := readUsage(gjson.ParseBytes(b))
	if got, ok := plainUsage(b); ok && *got != *want {
		t.Fatalf("%s: plainUsage read %+v, readUsage %+v", b, *got, *want)
	}
	if got := scannedUsage(b); *got != *want {
		t.Fatalf("%s: scannedUsage read %+v, readUsage %+v", b, *got, *want)
	}
}

// FuzzPlainUsage: on any JSON object, plainUsage reads what readUsage
// reads, or leaves it to readUsage.
func FuzzPlainUsage(f *testing.F) {
	for _, c := range plainUsageCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) || !gjson.ParseBytes(b).IsObject() {
			return
		}
		checkPlainUsage(t, b)
	})
}
