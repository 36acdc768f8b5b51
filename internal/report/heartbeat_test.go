package report

import (
	"fmt"
	"strings"
	"testing"
)

// node is a Node line's fields whose only moving part is its Ready condition's heartbeat.
func node(name, rv, beat string) string {
	return fmt.Sprintf(`,"group":"","version":"v1","resource":"nodes","kind":"Node","name":%q,"resourceVersion":%q,"object":{"apiVersion":"v1","kind":"Node","metadata":{"name":%q,"resourceVersion":%q,"managedFields":[{"manager":"kubelet","operation":"Update","apiVersion":"v1","subresource":"status","time":"2026-11-21T05:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{}}}}]},"status":{"conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":%q}]}}`,
		name, rv, name, rv, beat)
}

// The objects that changed most are ranked by changes, not heartbeats: a node whose kubelet only
// renewed its heartbeat 40 times ranks below a ConfigMap changed twice, its heartbeats counted
// apart (and shown).
func TestObjectsRankChangesNotHeartbeats(t *testing.T) {
	r := newRec()
	r.line(0, "Added", node("kwok-node-0", "1", "2026-11-21T05:00:00Z")+`,"delta":"Added"`)
	for i := 1; i <= 40; i++ {
		r.line(i*10, "Updated", node("kwok-node-0", fmt.Sprint(i+1), fmt.Sprintf("2026-11-21T05:00:%02dZ", i))+
			fmt.Sprintf(`,"oldResourceVersion":%q,"delta":"Updated"`, fmt.Sprint(i)))
	}
	r.line(500, "Added", cm("demo", "cfg", "100", "m", "2026-11-21T05:00:00Z", "a")+`,"delta":"Added"`)
	r.line(510, "Updated", cm("demo", "cfg", "101", "m", "2026-11-21T05:00:01Z", "b")+`,"oldResourceVersion":"100","delta":"Updated"`)
	r.line(520, "Updated", cm("demo", "cfg", "102", "m", "2026-11-21T05:00:02Z", "c")+`,"oldResourceVersion":"101","delta":"Updated"`)
	rep, err := Read(strings.NewReader(r.b.String()), "beats.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Objects) != 2 {
		t.Fatalf("%d objects, want 2", len(rep.Objects))
	}
	first, second := rep.Objects[0], rep.Objects[1]
	if first.Name != "cfg" || first.Changes != 2 || first.Heartbeats != 0 {
		t.Errorf("first: %s with %d changes, %d heartbeats; want cfg with 2 and 0", first.Name, first.Changes, first.Heartbeats)
	}
	if second.Name != "kwok-node-0" || second.Changes != 0 || second.Heartbeats != 40 || len(second.Writers) != 0 {
		t.Errorf("second: %s with %d changes, %d heartbeats, writers %+v; want kwok-node-0 with 0, 40 and none", second.Name, second.Changes, second.Heartbeats, second.Writers)
	}
	var page strings.Builder
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `data-heartbeats="40"`) {
		t.Error("the page does not show the node's 40 heartbeats")
	}
}
