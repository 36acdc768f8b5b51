package watch

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestParsePredicates(t *testing.T) {
	tests := []struct {
		name    string
		values  []string
		want    []string
		wantErr string
	}{
		{name: "none"},
		{name: "one", values: []string{"generation"}, want: []string{"generation"}},
		{name: "or and and", values: []string{"generation|labels", "resourceVersion"}, want: []string{"generation|labels", "resourceVersion"}},
		{name: "unknown", values: []string{"spec"}, wantErr: `--predicate must be one of generation, labels, annotations, resourceVersion (alternatives joined by |), got "spec"`},
		{name: "empty alternative", values: []string{"generation|"}, wantErr: `got "generation|"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, err := ParsePredicates(tt.values)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range ps {
				got = append(got, p.String())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func obj(rv string, gen int64, labels, annotations map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetResourceVersion(rv)
	u.SetGeneration(gen)
	u.SetLabels(labels)
	u.SetAnnotations(annotations)
	return u
}

// Filter applies controller-runtime's update predicates: creates and deletes always pass.
func TestFilter(t *testing.T) {
	base := obj("1", 1, map[string]string{"a": "1"}, map[string]string{"n": "1"})
	statusOnly := obj("2", 1, map[string]string{"a": "1"}, map[string]string{"n": "1"})
	spec := obj("3", 2, map[string]string{"a": "1"}, map[string]string{"n": "1"})
	relabel := obj("4", 1, map[string]string{"a": "2"}, map[string]string{"n": "1"})
	annotate := obj("5", 1, map[string]string{"a": "1"}, map[string]string{"n": "2"})
	update := func(old, cur *unstructured.Unstructured, d Delta) *Event {
		return &Event{
			Type: Updated,
			Obj: ObjectInfo{
				Delta:              d,
				Object:             cur,
				OldObject:          old,
				OldResourceVersion: old.GetResourceVersion(),
			},
			ResourceVersion: cur.GetResourceVersion(),
		}
	}
	ps := func(v ...string) []Predicate {
		p, err := ParsePredicates(v)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name  string
		preds []Predicate
		ev    *Event
		want  string
	}{
		{"no predicate", nil, update(base, statusOnly, DeltaUpdated), ""},
		{"create passes", ps("generation"), &Event{Type: Added, Obj: ObjectInfo{Object: base}}, ""},
		{"delete passes", ps("generation"), &Event{Type: Deleted, Obj: ObjectInfo{Object: base, Tombstone: true}}, ""},
		{"status write dropped by generation", ps("generation"), update(base, statusOnly, DeltaUpdated), "generation"},
		{"spec change passes generation", ps("generation"), update(base, spec, DeltaUpdated), ""},
		{"labels", ps("labels"), update(base, relabel, DeltaUpdated), ""},
		{"labels unchanged", ps("labels"), update(base, annotate, DeltaUpdated), "labels"},
		{"annotations", ps("annotations"), update(base, annotate, DeltaUpdated), ""},
		{"annotations unchanged", ps("annotations"), update(base, relabel, DeltaUpdated), "annotations"},
		{"resync dropped by resourceVersion", ps("resourceVersion"), update(base, base, DeltaSync), "resourceVersion"},
		{"status write passes resourceVersion", ps("resourceVersion"), update(base, statusOnly, DeltaUpdated), ""},
		{"or: labels lets it through", ps("generation|labels"), update(base, relabel, DeltaUpdated), ""},
		{"or: neither", ps("generation|labels"), update(base, annotate, DeltaUpdated), "generation|labels"},
		{"and: the first that drops is named", ps("resourceVersion", "generation"), update(base, statusOnly, DeltaUpdated), "generation"},
		{"no old object", ps("resourceVersion"), &Event{Type: Updated, Obj: ObjectInfo{Object: base}}, "resourceVersion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Filter(tt.preds, tt.ev); got != tt.want {
				t.Errorf("Filter = %q, want %q", got, tt.want)
			}
		})
	}
}
