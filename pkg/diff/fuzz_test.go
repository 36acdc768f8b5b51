package diff

import (
	"encoding/json"
	"testing"
)

// FuzzDiff: any two JSON objects (deep nesting, odd types, keyed and unkeyed lists, managedFields
// of any shape) diff, attribute and render without panicking; equal objects have no changes.
func FuzzDiff(f *testing.F) {
	seeds := [][2]string{
		{`{"spec":{"replicas":1}}`, `{"spec":{"replicas":3}}`},
		{`{"spec":{"containers":[{"name":"a","image":"x"}]}}`, `{"spec":{"containers":[{"name":"a","image":"y"},{"name":"b"}]}}`},
		{`{"metadata":{"managedFields":[{"manager":"m","operation":"Update","fieldsV1":{"f:spec":{}}}]}}`, `{"metadata":{"managedFields":[{"manager":"m","time":"t","fieldsV1":{"f:spec":{"f:x":{}}}},{"manager":7}]}}`},
		{`{"a":[1,[2,[3]],{"name":null}]}`, `{"a":"s"}`},
		{`{"data":{"k":"\u001b"}}`, `{"data":{}}`},
		{`{}`, `{"x":{"y":{"z":{"w":[[[[]]]]}}}}`},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		var old, cur map[string]any
		if json.Unmarshal([]byte(a), &old) != nil || json.Unmarshal([]byte(b), &cur) != nil || old == nil || cur == nil {
			return
		}
		_ = Compute(old, cur)
		_ = ComputeSecret(old, cur)
		_ = ChangedManagers(old, cur)
		_, _ = Unified(old, cur, "old", "new")
		if same := Compute(old, old); len(same) != 0 {
			t.Fatalf("an object differs from itself: %v", same)
		}
	})
}
