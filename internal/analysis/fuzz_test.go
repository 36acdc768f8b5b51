package analysis

import (
	"encoding/json"
	"testing"
)

// FuzzFieldPaths: whatever fieldsV1 a server sends, naming its fields never panics nor names an
// empty path.
func FuzzFieldPaths(f *testing.F) {
	f.Add(`{"f:spec":{"f:replicas":{}}}`)
	f.Add(`{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:lastHeartbeatTime":{},"f:type":{}}}}}`)
	f.Add(`{"f:metadata":{"f:finalizers":{".":{},"v:\"a\"":{}},"f:labels":{"f:app.kubernetes.io/name":{}}}}`)
	f.Add(`{"f:spec":{"f:containers":{"k:{\"name\":\"a b\"}":{"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{}}}}}}`)
	f.Add(`{"f:x":{"i:0":{},"i:1":{"f:y":{}}},"k:bad":{}}`)
	f.Fuzz(func(t *testing.T, s string) {
		var tree map[string]any
		if json.Unmarshal([]byte(s), &tree) != nil {
			return
		}
		for _, c := range fieldPaths(tree) {
			if c.Path == "" {
				t.Errorf("an empty path from %s", s)
			}
		}
	})
}
