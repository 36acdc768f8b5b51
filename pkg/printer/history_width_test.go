package printer

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// A STATE as long as a custom resource's many printer columns make it is cut, so that BY and CHANGES stay on
// a terminal's screen; Wide (-o wide) shows it whole.
func TestHistoryStateFitsATerminal(t *testing.T) {
	// A NodeClaim-like custom resource with many printer columns, each with a long value.
	spec := map[string]any{}
	var columns []discovery.PrinterColumn
	for _, c := range []string{"Type", "Capacity", "Zone", "Node", "ImageID", "Reason", "Message"} {
		spec[c] = strings.Repeat(strings.ToLower(c), 8)
		columns = append(columns, discovery.PrinterColumn{Name: c, Type: "string", JSONPath: ".spec." + c})
	}
	spec["Message"] = "no preemption victims found for incoming pod"
	claim := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "karpenter.example/v1", "kind": "NodeClaim",
		"metadata": map[string]any{"name": "x", "resourceVersion": "7"}, "spec": spec}}
	claims := discovery.Resource{Group: "karpenter.example", Version: "v1", Resource: "nodeclaims", Kind: "NodeClaim", PrinterColumns: columns}
	ev := &watch.Event{
		Type:            watch.Added,
		Obj:             watch.ObjectInfo{Delta: watch.DeltaAdded, Object: claim},
		Time:            time.Unix(1, 0),
		Resource:        claims,
		Name:            "x",
		ResourceVersion: "7",
	}
	table := func(wide bool) string {
		h := NewHistory(Options{Timestamps: "none"})
		h.Wide = wide
		h.Add(ev)
		var b strings.Builder
		if err := h.Write(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	cut := table(false)
	for i, line := range strings.Split(strings.TrimSpace(cut), "\n") {
		if n := len([]rune(line)); n > 120 {
			t.Errorf("row %d is %d wide, want at most 120:\n%s", i, n, cut)
		}
	}
	if !strings.Contains(cut, "…") || strings.Contains(cut, "preemption") {
		t.Errorf("the state is not cut where it shows it:\n%s", cut)
	}
	if whole := table(true); !strings.Contains(whole, "no preemption victims found for incoming pod") {
		t.Errorf("-o wide cut the state:\n%s", whole)
	}
}
