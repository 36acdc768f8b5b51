package printer

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Last says the newest update as its row does, a Secret's values redacted.
func TestHistoryLast(t *testing.T) {
	obj := func(kind, rv string, field string, v any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind,
			"metadata": map[string]any{"namespace": "a", "name": "x", "resourceVersion": rv}, field: v}}
	}
	update := func(res discovery.Resource, old, cur *unstructured.Unstructured) *watch.Event {
		a := diff.Attribution{Managers: []diff.Manager{{Manager: "op", Operation: "Update"}}, Rule: diff.RuleEntry}
		ev := watch.UpdateOf(res, old, cur, time.Unix(1, 0))
		ev.Obj.Attribution, ev.Obj.Changes = &a, diff.Compute(old.Object, cur.Object)
		return &ev
	}
	h := NewHistory(Options{Timestamps: "absolute"})
	if by, ch := h.Last(); by != "" || ch != "" {
		t.Errorf("before any update: %q %q", by, ch)
	}
	cms := discovery.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	h.Add(update(cms, obj("ConfigMap", "1", "data", map[string]any{"k": "1"}), obj("ConfigMap", "2", "data", map[string]any{"k": "2"})))
	if by, ch := h.Last(); by != "op (Update)" || ch != `data.k: "1" → "2"` {
		t.Errorf("configmap: %q %q", by, ch)
	}
	secrets := discovery.Resource{Version: "v1", Resource: "secrets", Kind: "Secret", Namespaced: true}
	h.Add(update(secrets, obj("Secret", "3", "data", map[string]any{"k": "czE="}), obj("Secret", "4", "data", map[string]any{"k": "czI="})))
	if _, ch := h.Last(); ch == "" || strings.Contains(ch, "czE=") || strings.Contains(ch, "czI=") {
		t.Errorf("secret: %q, want the values redacted", ch)
	}
}

// MaxRows keeps the newest rows only.
func TestHistoryMaxRows(t *testing.T) {
	h := NewHistory(Options{Timestamps: "absolute"})
	h.MaxRows = 3
	cms := discovery.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	for i := range 5 {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"namespace": "a", "name": "x", "resourceVersion": strconv.Itoa(i)}}}
		h.Add(&watch.Event{Type: watch.Added, Obj: watch.ObjectInfo{Delta: watch.DeltaAdded, Object: o}, Time: time.Unix(int64(i), 0), Resource: cms, Namespace: "a", Name: "x", ResourceVersion: o.GetResourceVersion()})
	}
	var b strings.Builder
	if err := h.Write(&b); err != nil {
		t.Fatal(err)
	}
	if h.Len() != 3 || strings.Contains(b.String(), " 1 ") || !strings.Contains(b.String(), " 4") {
		t.Errorf("%d rows, want the newest 3 (rv 2, 3, 4):\n%s", h.Len(), b.String())
	}
}
