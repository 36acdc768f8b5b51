package diff

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A ReplicaSet as kube-controller-manager leaves it: one entry for the main resource, one for
// status, both stamped 10:00:01.
const rsManaged = `"managedFields":[
 {"manager":"kube-controller-manager","operation":"Update","apiVersion":"apps/v1","time":"2026-01-01T10:00:01Z","fieldsType":"FieldsV1",
  "fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}},"f:finalizers":{".":{},"v:\"a\"":{}}},"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}},
 {"manager":"kube-controller-manager","operation":"Update","subresource":"status","apiVersion":"apps/v1","time":"2026-01-01T10:00:01Z","fieldsType":"FieldsV1",
  "fieldsV1":{"f:status":{"f:readyReplicas":{},"f:replicas":{},"f:conditions":{".":{},"k:{\"type\":\"Ready\"}":{".":{},"f:status":{},"f:type":{}}}}}},
 {"manager":"kubectl-label","operation":"Update","apiVersion":"apps/v1","time":"2026-01-01T10:00:00Z","fieldsType":"FieldsV1",
  "fieldsV1":{"f:metadata":{"f:labels":{"f:tier":{}}},"f:spec":{"f:args":{}}}}]`

func rs(t *testing.T, rest string) map[string]any {
	return obj(t, `{"metadata":{"name":"web","resourceVersion":"1",`+rsManaged+`},`+rest+`}`)
}

func TestAttribute(t *testing.T) {
	kcm := Manager{Manager: "kube-controller-manager", Operation: "Update"}
	kcmStatus := Manager{Manager: "kube-controller-manager", Operation: "Update", Subresource: "status"}
	label := Manager{Manager: "kubectl-label", Operation: "Update"}
	base := `"spec":{"replicas":1,"args":["a"],"template":{"spec":{"containers":[{"name":"web","image":"v1"}]}}},"status":{"replicas":1,"readyReplicas":0,"conditions":[{"type":"Ready","status":"False"}]}`
	tests := []struct {
		name     string
		old, cur string
		want     Attribution
	}{
		{"a status count, same second: the status entry owns it",
			base, `"spec":{"replicas":1,"args":["a"],"template":{"spec":{"containers":[{"name":"web","image":"v1"}]}}},"status":{"replicas":1,"readyReplicas":1,"conditions":[{"type":"Ready","status":"False"}]}`,
			Attribution{Managers: []Manager{kcmStatus}, Rule: RuleOwnership}},
		{"a condition by its key",
			base, `"spec":{"replicas":1,"args":["a"],"template":{"spec":{"containers":[{"name":"web","image":"v1"}]}}},"status":{"replicas":1,"readyReplicas":0,"conditions":[{"type":"Ready","status":"True"}]}`,
			Attribution{Managers: []Manager{kcmStatus}, Rule: RuleOwnership}},
		{"a container's image by its key, and spec.replicas",
			base, `"spec":{"replicas":2,"args":["a"],"template":{"spec":{"containers":[{"name":"web","image":"v2"}]}}},"status":{"replicas":1,"readyReplicas":0,"conditions":[{"type":"Ready","status":"False"}]}`,
			Attribution{Managers: []Manager{kcm}, Rule: RuleOwnership}},
		{"inside an atomic list owned whole",
			base, `"spec":{"replicas":1,"args":["b"],"template":{"spec":{"containers":[{"name":"web","image":"v1"}]}}},"status":{"replicas":1,"readyReplicas":0,"conditions":[{"type":"Ready","status":"False"}]}`,
			Attribution{Managers: []Manager{label}, Rule: RuleOwnership}},
		{"fields of two owners: nobody",
			base, `"spec":{"replicas":2,"args":["a"],"template":{"spec":{"containers":[{"name":"web","image":"v1"}]}}},"status":{"replicas":1,"readyReplicas":1,"conditions":[{"type":"Ready","status":"False"}]}`,
			Attribution{Rule: RuleUnknown, Why: "the changed fields have different owners (spec.replicas, status.readyReplicas)"}},
		{"an unowned field",
			base, `"spec":{"replicas":1,"paused":true,"args":["a"],"template":{"spec":{"containers":[{"name":"web","image":"v1"}]}}},"status":{"replicas":1,"readyReplicas":0,"conditions":[{"type":"Ready","status":"False"}]}`,
			Attribution{Rule: RuleUnknown, Why: "no manager owns spec.paused"}},
		{"no-op",
			base, base,
			Attribution{Rule: RuleUnknown, NoOp: true, Why: "no-op: nothing but metadata.resourceVersion and managedFields changed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Attribute(rs(t, tt.old), rs(t, tt.cur), nil)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Attribute (-want +got):\n%s", d)
			}
		})
	}
}

// A finalizer removed (a set of scalars, named by value) is owned in the old object.
func TestAttributeRemovedFinalizer(t *testing.T) {
	old := obj(t, `{"metadata":{"finalizers":["a"],`+rsManaged+`}}`)
	cur := obj(t, `{"metadata":{`+rsManaged+`}}`)
	got := Attribute(old, cur, nil)
	want := Attribution{Managers: []Manager{{Manager: "kube-controller-manager", Operation: "Update"}}, Rule: RuleOwnership}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Attribute (-want +got):\n%s", d)
	}
}

// When an entry moved, the entry rule answers, as ChangedManagers does.
func TestAttributeEntry(t *testing.T) {
	old := obj(t, `{"metadata":{"managedFields":[{"manager":"a","operation":"Update","time":"2026-01-01T10:00:00Z","fieldsV1":{"f:spec":{"f:x":{}}}}]},"spec":{"x":1}}`)
	cur := obj(t, `{"metadata":{"managedFields":[{"manager":"a","operation":"Update","time":"2026-01-01T10:00:05Z","fieldsV1":{"f:spec":{"f:x":{}}}}]},"spec":{"x":2}}`)
	got := Attribute(old, cur, nil)
	want := Attribution{Managers: []Manager{{Manager: "a", Operation: "Update"}}, Rule: RuleEntry}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Attribute (-want +got):\n%s", d)
	}
}

func TestAttributeServerSide(t *testing.T) {
	managed := `"managedFields":[{"manager":"kube-controller-manager","operation":"Update","time":"2026-01-01T10:00:00Z","fieldsV1":{"f:spec":{"f:containers":{}}}}]`
	tests := []struct {
		name, old, cur string
		want           string
	}{
		{"a binding", `{"metadata":{` + managed + `},"spec":{}}`, `{"metadata":{` + managed + `},"spec":{"nodeName":"n1"}}`, RuleBinding},
		{"a binding and its condition", `{"metadata":{` + managed + `},"spec":{},"status":{"conditions":[{"type":"PodScheduled","status":"False"}]}}`,
			`{"metadata":{` + managed + `},"spec":{"nodeName":"n1"},"status":{"conditions":[{"type":"PodScheduled","status":"True"}]}}`, RuleBinding},
		{"a binding and its first condition", `{"metadata":{` + managed + `},"spec":{},"status":{"phase":"Pending"}}`,
			`{"metadata":{` + managed + `},"spec":{"nodeName":"n1"},"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"True"}]}}`, RuleBinding},
		{"a graceful delete", `{"metadata":{` + managed + `}}`, `{"metadata":{"deletionTimestamp":"2026-01-01T10:00:30Z","deletionGracePeriodSeconds":30,` + managed + `}}`, RuleDelete},
		{"a binding that sets the node's zone (v1.37)", `{"metadata":{"labels":{"app":"web"},` + managed + `},"spec":{}}`,
			`{"metadata":{"labels":{"app":"web","topology.kubernetes.io/zone":"zone-a","topology.kubernetes.io/region":"r1"},` + managed + `},"spec":{"nodeName":"n1"},"status":{"conditions":[{"type":"PodScheduled","status":"True"}]}}`, RuleBinding},
		{"a binding that gives an unlabelled pod its zone", `{"metadata":{` + managed + `},"spec":{}}`,
			`{"metadata":{"labels":{"topology.kubernetes.io/zone":"zone-a"},` + managed + `},"spec":{"nodeName":"n1"}}`, RuleBinding},
		{"a node set with a label changed is not a binding", `{"metadata":{"labels":{"app":"web"},` + managed + `},"spec":{}}`,
			`{"metadata":{"labels":{"app":"api"},` + managed + `},"spec":{"nodeName":"n1"}}`, RuleUnknown},
		{"labels added alone are not a binding", `{"metadata":{` + managed + `},"spec":{"nodeName":"n1"}}`,
			`{"metadata":{"labels":{"topology.kubernetes.io/zone":"zone-a"},` + managed + `},"spec":{"nodeName":"n1"}}`, RuleUnknown},
		{"a node moved is not a binding", `{"metadata":{` + managed + `},"spec":{"nodeName":"n0"}}`, `{"metadata":{` + managed + `},"spec":{"nodeName":"n1"}}`, RuleUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Attribute(obj(t, tt.old), obj(t, tt.cur), nil)
			if got.Rule != tt.want || len(got.Managers) != 0 || got.Why == "" {
				t.Errorf("Attribute = %+v, want rule %s, no managers, a reason", got, tt.want)
			}
		})
	}
}
