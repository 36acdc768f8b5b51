package printer

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Every object line says where it came from, and never something else: an unchanged relist
// delivery (same resourceVersion, like a resync) reads [RELIST], only a Sync delta reads
// [RESYNC], only a tombstone reads [TOMBSTONE]. The JSON delta and tombstone fields say the same.
func TestObjectLineSaysWhereItCameFrom(t *testing.T) {
	ev := func(typ watch.Type, delta watch.Delta, oldRV, rv string, initial, tombstone bool) watch.Event {
		return watch.Event{
			Type:            typ,
			Time:            t0,
			Resource:        deploy,
			Namespace:       "demo",
			Name:            "web",
			ResourceVersion: rv,
			Obj: watch.ObjectInfo{
				OldResourceVersion: oldRV,
				Delta:              delta,
				InitialList:        initial,
				Tombstone:          tombstone,
				Object:             obj("demo", "web", rv),
			},
		}
	}
	tests := []struct {
		name      string
		ev        watch.Event
		wantTag   string // "" for no tag
		wantRV    string
		wantDelta string
	}{
		{"initial list", ev(watch.Added, watch.DeltaReplaced, "", "90", true, false), "[initial list]", "rv=90", "Replaced"},
		{"watch add", ev(watch.Added, watch.DeltaAdded, "", "91", false, false), "", "rv=91", "Added"},
		{"watch update", ev(watch.Updated, watch.DeltaUpdated, "90", "92", false, false), "", "rv=90→92", "Updated"},
		{"watch delete", ev(watch.Deleted, watch.DeltaDeleted, "", "93", false, false), "", "rv=93", "Deleted"},
		{"relist add", ev(watch.Added, watch.DeltaReplaced, "", "94", false, false), "[RELIST]", "rv=94", "Replaced"},
		{"relist changed", ev(watch.Updated, watch.DeltaReplaced, "90", "95", false, false), "[RELIST]", "rv=90→95", "Replaced"},
		{"relist unchanged", ev(watch.Updated, watch.DeltaReplaced, "90", "90", false, false), "[RELIST]", "rv=90 (unchanged)", "Replaced"},
		{"resync", ev(watch.Updated, watch.DeltaSync, "90", "90", false, false), "[RESYNC: cached copy redelivered, nothing changed on the server]", "rv=90 (unchanged)", "Sync"},
		{"tombstone", ev(watch.Deleted, watch.DeltaDeleted, "", "96", false, true), "[TOMBSTONE: gone when the informer relisted; deleted while its watch was down]", "rv=96", "Deleted"},
	}
	tags := []string{"[initial list]", "[RELIST]", "[RESYNC", "[TOMBSTONE"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := render(t, Options{Timestamps: "none"}, []watch.Event{tt.ev})
			if !strings.Contains(line, "  "+tt.wantRV) {
				t.Errorf("line lacks %q: %s", tt.wantRV, line)
			}
			for _, tag := range tags {
				want := tt.wantTag != "" && strings.HasPrefix(tt.wantTag, tag)
				if got := strings.Contains(line, tag); got != want {
					t.Errorf("tag %s shown: %v, want %v: %s", tag, got, want, line)
				}
			}
			if tt.wantTag != "" && !strings.Contains(line, tt.wantTag) {
				t.Errorf("line lacks %q: %s", tt.wantTag, line)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(render(t, Options{Output: "json"}, []watch.Event{tt.ev})), &m); err != nil {
				t.Fatal(err)
			}
			if m["delta"] != tt.wantDelta || m["tombstone"] != tt.ev.Obj.Tombstone || m["initialList"] != tt.ev.Obj.InitialList {
				t.Errorf("json delta %v tombstone %v initialList %v, want %s %v %v", m["delta"], m["tombstone"], m["initialList"], tt.wantDelta, tt.ev.Obj.Tombstone, tt.ev.Obj.InitialList)
			}
		})
	}
}

// An update the outbox kept for a slow reader says how many earlier ones it stands for.
func TestFoldedUpdateSaysSo(t *testing.T) {
	ev := watch.Event{Type: watch.Updated, Time: t0, Resource: deploy, Namespace: "demo", Name: "web", Obj: watch.ObjectInfo{OldResourceVersion: "7", Delta: watch.DeltaUpdated, Folded: 3}, ResourceVersion: "8"}
	line := render(t, Options{Timestamps: "none"}, []watch.Event{ev})
	if want := "rv=7→8  (+3 earlier updates of this object not shown: the output did not keep up)\n"; !strings.HasSuffix(line, want) {
		t.Errorf("line %q does not end with %q", line, want)
	}
	ev.Obj.Folded = 1
	if line := render(t, Options{Timestamps: "none"}, []watch.Event{ev}); !strings.Contains(line, "(+1 earlier update of this object") {
		t.Errorf("line %q", line)
	}
	ev.Obj.Folded = 0
	if line := render(t, Options{Timestamps: "none"}, []watch.Event{ev}); strings.Contains(line, "earlier") {
		t.Errorf("an update that folded nothing says it did: %q", line)
	}
}
