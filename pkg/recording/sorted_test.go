package recording

import (
	"bytes"
	"encoding/json"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// viaMap is what an object line wrote before EncodeObject: the JSON decoded to a map (int64 and
// float64 numbers, as the dynamic client and DefaultUnstructuredConverter hold them) and
// encoded by encoding/json.
func viaMap(t testing.TB, b []byte) ([]byte, bool) {
	var v any
	if err := utiljson.Unmarshal(b, &v); err != nil {
		return nil, false
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	return out, true
}

var sortCases = []string{
	`{}`, `[]`, `null`, `"x"`, `12`, `-0`, `1.0`, `1e3`, `1.5e-7`, `12345678901234567890`, `-9223372036854775808`,
	`{"b":1,"a":{"d":[3,{"z":true,"y":null}],"c":"x"}}`,
	`{"k:{\"uid\":\"1\"}":{},"f:a":{".":{}},"f:\u00e9\/":{}}`,
	`{"s":"caf\u00e9 \u2028 \/ \b\f\n\r\t \u0001 \"q\" \\ <&>","n":[1.25,-3,0.1,100000000000000000000]}`,
	`{"aa":1,"a":2,"a\u0000":3,"B":4,"é":5,"~":6}`,
	`[{"b":[],"a":[{}]},{"a":{"c":{},"b":{}}}]`,
}

// TestSortKeys: compact JSON rewritten by SortKeys is what encoding/json writes for it decoded
// to a map.
func TestSortKeys(t *testing.T) {
	for _, in := range sortCases {
		checkSortKeys(t, []byte(in))
	}
}

func FuzzSortKeys(f *testing.F) {
	for _, in := range sortCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkSortKeys(t, in) })
}

func checkSortKeys(t *testing.T, in []byte) {
	t.Helper()
	want, ok := viaMap(t, in)
	if !ok {
		return // not JSON, or not JSON a map holds
	}
	// EncodeObject sorts what encoding/json wrote, raw JSON of a json.Marshaler included:
	// compact, HTML-escaped.
	compact, err := json.Marshal(json.RawMessage(in))
	if err != nil {
		return
	}
	got, err := SortKeys(compact)
	if err != nil {
		t.Fatalf("SortKeys(%s): %v", compact, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("SortKeys(%s):\n got %s\nwant %s", compact, got, want)
	}
}
