package recording_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-informer/kubectl-informer/internal/testutil"
	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var (
	deploy = discovery.Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true}
	t0     = time.Date(2026, 11, 21, 5, 0, 0, 123456789, time.UTC)
)

// An object line says where the event came from (initial list, delta, tombstone, the old
// resourceVersion of an update), and decodes back to the same.
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
				Object:             testutil.Object("apps/v1", "Deployment", "demo", "web", rv),
			},
		}
	}
	tests := []struct {
		name string
		ev   watch.Event
		want map[string]any
	}{
		{"initial list", ev(watch.Added, watch.DeltaReplaced, "", "90", true, false),
			map[string]any{"initialList": true, "delta": "Replaced", "tombstone": false, "resourceVersion": "90"}},
		{"watch update", ev(watch.Updated, watch.DeltaUpdated, "90", "92", false, false),
			map[string]any{"initialList": false, "delta": "Updated", "tombstone": false, "resourceVersion": "92", "oldResourceVersion": "90"}},
		{"resync", ev(watch.Updated, watch.DeltaSync, "90", "90", false, false),
			map[string]any{"initialList": false, "delta": "Sync", "tombstone": false, "resourceVersion": "90", "oldResourceVersion": "90"}},
		{"tombstone", ev(watch.Deleted, watch.DeltaDeleted, "", "96", false, true),
			map[string]any{"initialList": false, "delta": "Deleted", "tombstone": true, "resourceVersion": "96"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, err := recording.Encode(&tt.ev, recording.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
				t.Fatalf("not one line: %q", line)
			}
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatal(err)
			}
			got := map[string]any{}
			for _, k := range []string{"initialList", "delta", "tombstone", "resourceVersion", "oldResourceVersion"} {
				if v, ok := m[k]; ok {
					got[k] = v
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("line fields (-want +got):\n%s", diff)
			}
			back, err := recording.DecodeEvent(line)
			if err != nil {
				t.Fatal(err)
			}
			if back.Obj.InitialList != tt.ev.Obj.InitialList || back.Obj.Delta != tt.ev.Obj.Delta || back.Obj.Tombstone != tt.ev.Obj.Tombstone ||
				back.ResourceVersion != tt.ev.ResourceVersion || back.Obj.OldResourceVersion != tt.ev.Obj.OldResourceVersion {
				t.Errorf("decoded %+v, want the fields of %+v", back, tt.ev)
			}
		})
	}
}

// Options.Derived or Derive decide what an object line carries beyond its event; without them
// the object is written as it is.
func TestEncodeDerived(t *testing.T) {
	ev := watch.Event{
		Type:            watch.Added,
		Time:            t0,
		Resource:        deploy,
		Namespace:       "demo",
		Name:            "web",
		ResourceVersion: "1",
		Obj:             watch.ObjectInfo{Object: testutil.Object("apps/v1", "Deployment", "demo", "web", "1")},
	}
	plain, err := recording.Encode(&ev, recording.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(plain, []byte(`"object":{"apiVersion":"apps/v1"`)) || bytes.Contains(plain, []byte(`"state"`)) {
		t.Errorf("without Derive: %s", plain)
	}
	derived, err := recording.Encode(&ev, recording.Options{Derive: func(*watch.Event) recording.Derived {
		return recording.Derived{Object: map[string]any{"x": "redacted"}, State: &recording.State{Status: "Current"}}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(derived, []byte(`"state":{"status":"Current"},"object":{"x":"redacted"}`)) {
		t.Errorf("with Derive: %s", derived)
	}
	// What the caller derived already (Options.Derived) is written instead: Derive is not asked.
	given, err := recording.Encode(&ev, recording.Options{
		Derive:  func(*watch.Event) recording.Derived { panic("Derive asked though Derived was given") },
		Derived: &recording.Derived{Object: map[string]any{"x": "given"}, State: &recording.State{Status: "InProgress"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(given, []byte(`"state":{"status":"InProgress"},"object":{"x":"given"}`)) {
		t.Errorf("with Derived: %s", given)
	}
}

// A Writer's file is private, starts with the header, and holds one whole line per event.
func TestWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.ndjson")
	if err := os.WriteFile(path, []byte("old content, world-readable\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := recording.Create(path, recording.Header{ServerVersion: "v1.37.1", Flags: map[string]string{"namespace": "demo"}},
		[]discovery.Resource{deploy}, recording.Options{PluginVersion: "v1.2.3", SecretsRedacted: true})
	if err != nil {
		t.Fatal(err)
	}
	events := []watch.Event{
		{Type: watch.Added, Time: t0, Resource: deploy, Namespace: "demo", Name: "web", ResourceVersion: "1", Obj: watch.ObjectInfo{Object: testutil.Object("apps/v1", "Deployment", "demo", "web", "1")}},
		{Type: watch.Synced, Time: t0, Resource: deploy, Lifecycle: watch.LifecycleInfo{Items: 1}, ResourceVersion: "1"},
	}
	for i := range events {
		if err := w.Write(&events[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	if len(lines) != 3 {
		t.Fatalf("%d lines, want a header and 2 events:\n%s", len(lines), b)
	}
	dec := recording.NewDecoder()
	d, err := dec.Decode(lines[0])
	if err != nil {
		t.Fatal(err)
	}
	h := d.Header
	if h == nil || h.Type != recording.HeaderType || h.FormatVersion != recording.FormatVersion || h.PluginVersion != "v1.2.3" ||
		h.ServerVersion != "v1.37.1" || !h.SecretsRedacted || h.Flags["namespace"] != "demo" {
		t.Fatalf("header = %+v", h)
	}
	if diff := cmp.Diff([]discovery.Resource{deploy}, h.ResourceList()); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	for i, line := range lines[1:] {
		want, err := recording.Encode(&events[i], recording.Options{PluginVersion: "v1.2.3", SecretsRedacted: true})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(append(bytes.Clone(line), '\n'), want) {
			t.Errorf("line %d:\n%s", i+2, cmp.Diff(string(want), string(line)+"\n"))
		}
	}
}

// An update attributed through a controller's reconcile keeps it in the recording: the
// objects cannot give it again (their managedFields name nobody), so replay reads it back.
func TestReconcileAttributionRoundTrip(t *testing.T) {
	ev := watch.Event{
		Type:            watch.Updated,
		Time:            t0,
		Resource:        deploy,
		Namespace:       "demo",
		Name:            "web",
		ResourceVersion: "2",
		Obj: watch.ObjectInfo{
			OldResourceVersion: "1",
			Delta:              watch.DeltaUpdated,
			Object:             testutil.Object("apps/v1", "Deployment", "demo", "web", "2"),
		},
	}
	a := diff.Attribution{Rule: diff.RuleReconcile, Managers: []diff.Manager{{Manager: "widget", Operation: "Reconcile"}},
		Reconcile: &diff.ReconcileRef{Controller: "widget", ReconcileID: "3f1c9a7e-0000"}}
	line, err := recording.Encode(&ev, recording.Options{Derive: func(*watch.Event) recording.Derived {
		return recording.Derived{Update: &recording.Update{Attribution: a}}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(line, []byte(`"attribution":"reconcile","reconcile":{"controller":"widget","reconcileID":"3f1c9a7e-0000"}`)) {
		t.Fatalf("line: %s", line)
	}
	back, err := recording.DecodeEvent(line)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&a, back.Obj.Attribution); diff != "" {
		t.Errorf("decoded attribution (-want +got):\n%s", diff)
	}
}

// Every time written is one DecodeLine reads (HOSTILE-CASES-2 F10: a controller log's epoch of
// -1e300 was recorded as the year 292277026304, and replay and report refused the line): a time
// outside RFC 3339's years 0000-9999 is written as the nearest it can say.
func TestTimesOutOfRangeRecordable(t *testing.T) {
	for _, at := range []time.Time{time.Unix(1<<62, 0), time.Unix(-1<<62, 0), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)} {
		ev := watch.Event{Type: watch.ControllerReconcile, Time: at, Namespace: "hl", Name: "plain", Key: "hl/plain",
			Reconcile: &watch.ReconcileInfo{Controller: "tc", Result: "ok", Source: "time.log", Format: "zap-json", UntrustedTime: true}}
		line, err := recording.Encode(&ev, recording.Options{})
		if err != nil {
			t.Fatal(err)
		}
		back, err := recording.DecodeEvent(line)
		if err != nil {
			t.Fatalf("%s: %v", at, err)
		}
		if y := back.Time.Year(); y != 0 && y != 9999 {
			t.Errorf("%s read back as %s, want the year 0 or 9999", at, back.Time)
		}
		if !back.Reconcile.UntrustedTime {
			t.Errorf("untrustedTime lost: %s", line)
		}
	}
}
