package printer

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/internal/analysis"
	"github.com/kubectl-informer/kubectl-informer/internal/testutil"
	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var update = flag.Bool("update", false, "rewrite golden files")

var (
	deploy  = discovery.Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true}
	secrets = discovery.Resource{Version: "v1", Resource: "secrets", Kind: "Secret", Namespaced: true}
	t0      = time.Date(2026, 11, 21, 5, 0, 0, 123456789, time.UTC)
)

func obj(ns, name, rv string) *unstructured.Unstructured {
	return testutil.Object("apps/v1", "Deployment", ns, name, rv)
}

// sample is one of every kind of event, in the order a run with a relist and a resync prints.
func sample() []watch.Event {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	return []watch.Event{
		{Type: watch.Informer, Time: at(0), Lifecycle: watch.LifecycleInfo{Info: &watch.InformerInfo{ClientGoVersion: "v0.37.1", Queue: "RealFIFO", AtomicEvents: true, WatchList: true, ResyncPeriod: 30 * time.Second, Namespace: "demo", Resources: []discovery.Resource{deploy}}}},
		{Type: watch.Watch, Time: at(0), Resource: deploy, Lifecycle: watch.LifecycleInfo{SendInitialEvents: true, TimeoutSeconds: 480}},
		{Type: watch.Bookmark, Time: at(0), Resource: deploy, ResourceVersion: "100", Lifecycle: watch.LifecycleInfo{InitialEventsEnd: true}},
		{Type: watch.Added, Time: at(0), Resource: deploy, Namespace: "demo", Name: "web", ResourceVersion: "90", Obj: watch.ObjectInfo{InitialList: true, Delta: watch.DeltaReplaced, Object: obj("demo", "web", "90")}},
		{Type: watch.Synced, Time: at(0), Resource: deploy, Lifecycle: watch.LifecycleInfo{Items: 1, Duration: 15 * time.Millisecond}, ResourceVersion: "100"},
		{Type: watch.Added, Time: at(1), Resource: deploy, Namespace: "demo", Name: "api", ResourceVersion: "101", Obj: watch.ObjectInfo{Delta: watch.DeltaAdded, Object: obj("demo", "api", "101")}},
		{Type: watch.Updated, Time: at(2), Resource: deploy, Namespace: "demo", Name: "api", ResourceVersion: "102", Obj: watch.ObjectInfo{OldResourceVersion: "101", Delta: watch.DeltaUpdated, Object: obj("demo", "api", "102"), Queue: &watch.QueueFigures{Depth: 2, Adds: 3, Retries: 0}}},
		{
			Type:     watch.Reconciled,
			Time:     at(3),
			Resource: deploy,
			Key:      "demo/api",
			Queued: watch.QueuedInfo{
				Wait:          1500 * time.Microsecond,
				Work:          200 * time.Millisecond,
				Requeues:      1,
				Failed:        true,
				TriggerCount:  2,
				Requeue:       true,
				RequeueReason: "its previous reconcile failed (simulated by --fail-rate) and the key was requeued rate-limited",
				Triggers:      []watch.Trigger{{Type: watch.Added, Delta: watch.DeltaAdded, ResourceVersion: "101", Time: at(1)}, {Type: watch.Updated, Delta: watch.DeltaUpdated, ResourceVersion: "102", Managers: []string{"kubectl-edit"}, Time: at(2)}},
			},
			Obj: watch.ObjectInfo{Queue: &watch.QueueFigures{Depth: 1, Adds: 3, Retries: 1}},
		},
		{Type: watch.Resync, Time: at(30), Resource: deploy, Lifecycle: watch.LifecycleInfo{Items: 2}},
		{Type: watch.Updated, Time: at(30), Resource: deploy, Namespace: "demo", Name: "web", ResourceVersion: "90", Obj: watch.ObjectInfo{OldResourceVersion: "90", Delta: watch.DeltaSync, Object: obj("demo", "web", "90"), Filtered: "resourceVersion"}},
		{Type: watch.WatchClosed, Time: at(40), Resource: deploy, Lifecycle: watch.LifecycleInfo{Reason: "connection lost or closed by the server after 40s"}, ResourceVersion: "102"},
		{Type: watch.Error, Time: at(41), Resource: deploy, Lifecycle: watch.LifecycleInfo{Verb: "watch", Reason: "Expired", Message: "too old resource version: 102 (150)"}},
		{Type: watch.List, Time: at(42), Resource: deploy, ResourceVersion: "160", Lifecycle: watch.LifecycleInfo{Items: 2, Duration: 3 * time.Millisecond}},
		{Type: watch.Relist, Time: at(42), Resource: deploy, Lifecycle: watch.LifecycleInfo{Reason: "410 Gone: too old resource version: 102 (150)", FromResourceVersion: "102", Counts: watch.RelistCounts{Added: 1, Updated: 1, Deleted: 1}}, ResourceVersion: "160"},
		{Type: watch.Deleted, Time: at(42), Resource: deploy, Namespace: "demo", Name: "api", ResourceVersion: "102", Obj: watch.ObjectInfo{Delta: watch.DeltaDeleted, Tombstone: true, Object: obj("demo", "api", "102")}},
		{Type: watch.Updated, Time: at(42), Resource: deploy, Namespace: "demo", Name: "web", ResourceVersion: "155", Obj: watch.ObjectInfo{OldResourceVersion: "90", Delta: watch.DeltaReplaced, Object: obj("demo", "web", "155")}},
		{Type: watch.Added, Time: at(42), Resource: deploy, Namespace: "demo", Name: "new", ResourceVersion: "158", Obj: watch.ObjectInfo{Delta: watch.DeltaReplaced, Object: obj("demo", "new", "158")}},
		{Type: watch.Deleted, Time: at(50), Resource: deploy, Namespace: "demo", Name: "new", ResourceVersion: "170", Obj: watch.ObjectInfo{Delta: watch.DeltaDeleted, Object: obj("demo", "new", "170")}},
	}
}

// render prints events as a run does: analyzed first (in place), then printed.
func render(t *testing.T, opts Options, events []watch.Event) string {
	t.Helper()
	analyze(events)
	var buf bytes.Buffer
	p := New(&buf, opts)
	for i := range events {
		if err := p.Print(&events[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./pkg/printer -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got; go test ./pkg/printer -update rewrites it):\n%s", name, diff)
	}
}

func TestHumanGolden(t *testing.T) {
	t.Setenv("TZ", "UTC")
	time.Local = time.UTC
	golden(t, "human.txt", render(t, Options{}, sample()))
	golden(t, "human-bookmarks.txt", render(t, Options{ShowBookmarks: true}, sample()))
	golden(t, "human-color.txt", render(t, Options{Color: true}, sample()))
	golden(t, "human-reconciles.txt", render(t, Options{ShowReconciles: true, QueueColumn: true}, sample()))
}

func TestJSONGolden(t *testing.T) {
	golden(t, "events.ndjson", render(t, Options{Output: "json", PluginVersion: "v1.0.0"}, sample()))
}

// Every line is one JSON object carrying the contract's fields for its type.
func TestJSONContract(t *testing.T) {
	out := render(t, Options{Output: "json"}, sample())
	common := []string{"time", "type"}
	resource := []string{"group", "version", "resource", "kind"}
	perType := map[string][]string{
		"Informer":    {"clientGoVersion", "queue", "atomicEvents", "watchList", "resyncPeriod", "resources"},
		"Added":       {"namespace", "name", "resourceVersion", "initialList", "delta", "tombstone", "object"},
		"Updated":     {"namespace", "name", "resourceVersion", "oldResourceVersion", "initialList", "delta", "tombstone", "object"},
		"Deleted":     {"namespace", "name", "resourceVersion", "initialList", "delta", "tombstone", "object"},
		"List":        {"resourceVersion", "items", "durationMs", "initial"},
		"Watch":       {"resourceVersion", "sendInitialEvents"},
		"WatchClosed": {"reason", "resourceVersion"},
		"Bookmark":    {"resourceVersion"},
		"Synced":      {"items", "durationMs"},
		"Resync":      {"items"},
		"Relist":      {"reason", "fromResourceVersion", "resourceVersion", "added", "updated", "deleted", "unchanged"},
		"Error":       {"message", "reason"},
		"Reconciled":  {"key", "waitMs", "workMs", "requeues", "error", "queue", "triggerCount", "triggers", "requeue", "requeueReason"},
	}
	seen := map[string]bool{}
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, line)
		}
		typ := m["type"].(string)
		seen[typ] = true
		want := append([]string{}, common...)
		if typ != "Informer" {
			want = append(want, resource...)
		}
		want = append(want, perType[typ]...)
		for _, f := range want {
			if _, ok := m[f]; !ok {
				t.Errorf("line %d (%s) lacks %q: %s", i+1, typ, f, line)
			}
		}
		if typ == "Added" || typ == "Deleted" {
			if _, ok := m["oldResourceVersion"]; ok {
				t.Errorf("%s carries oldResourceVersion", typ)
			}
		}
		if _, err := time.Parse(time.RFC3339Nano, m["time"].(string)); err != nil {
			t.Errorf("line %d time: %v", i+1, err)
		}
	}
	for typ := range perType {
		if !seen[typ] {
			t.Errorf("sample has no %s event", typ)
		}
	}
}

func secretEvent() watch.Event {
	s := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"namespace": "demo", "name": "db", "resourceVersion": "5",
			"annotations": map[string]any{lastAppliedAnnotation: `{"data":{"password":"aHVudGVyMg=="}}`}},
		"data":       map[string]any{"password": "aHVudGVyMg=="},
		"stringData": map[string]any{"token": "hunter2"},
	}}
	return watch.Event{Type: watch.Added, Time: t0, Resource: secrets, Namespace: "demo", Name: "db", ResourceVersion: "5", Obj: watch.ObjectInfo{Delta: watch.DeltaAdded, Object: s}}
}

func TestSecretsRedacted(t *testing.T) {
	for _, output := range []OutputFormat{"", "json"} {
		ev := secretEvent()
		info := watch.Event{Type: watch.Informer, Time: t0, Lifecycle: watch.LifecycleInfo{Info: &watch.InformerInfo{Resources: []discovery.Resource{secrets}}}}
		out := render(t, Options{Output: output}, []watch.Event{info, ev})
		for _, leak := range []string{"aHVudGVyMg==", "hunter2"} {
			if strings.Contains(out, leak) {
				t.Errorf("-o %q leaks %q:\n%s", output, leak, out)
			}
		}
		if output == "json" && (!strings.Contains(out, `"password":"\u003credacted: 12 bytes\u003e"`) || !strings.Contains(out, `"secretsRedacted":true`)) {
			t.Errorf("-o json does not show the redacted key:\n%s", out)
		}
		if output == "" && !strings.Contains(out, "secret values redacted") {
			t.Errorf("header does not say secrets are redacted:\n%s", out)
		}
		// The event's object itself is untouched.
		if ev.Obj.Object.Object["data"].(map[string]any)["password"] != "aHVudGVyMg==" {
			t.Error("redaction modified the cached object")
		}
		shown := render(t, Options{Output: "json", ShowSecrets: true}, []watch.Event{secretEvent()})
		if !strings.Contains(shown, "aHVudGVyMg==") {
			t.Error("--show-secrets does not show the value")
		}
	}
}

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain-name", "plain-name"},
		{"a\x1b]0;owned\x07b", `a^[]0;owned\x07b`},
		{"line\r\nbreak", `line\r\x0abreak`},
		{"c1\u009bcsi", `c1\u009bcsi`},
		{"bidi\u202eevil", `bidi\u202eevil`},
		{"ünïcode", "ünïcode"},
		{"bad\xffutf8", `bad\ufffdutf8`},
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Text from the server never reaches a terminal raw, with or without color.
func TestHostileTextHuman(t *testing.T) {
	ev := watch.Event{Type: watch.Added, Time: t0, Resource: deploy, Namespace: "demo", Name: "x\x1b]8;;http://evil\x07y\rz", ResourceVersion: "1\x1b[2J", Obj: watch.ObjectInfo{Delta: watch.DeltaAdded}}
	for _, color := range []bool{false, true} {
		out := render(t, Options{Color: color}, []watch.Event{ev})
		body := strings.NewReplacer(colorReset, "", colorRed, "", colorGreen, "", colorYellow, "", colorBlue, "", colorMagent, "", colorCyan, "", colorDim, "").Replace(out)
		if strings.ContainsAny(strings.TrimSuffix(body, "\n"), "\x1b\x07\r\n") {
			t.Errorf("color=%v: raw control bytes in %q", color, out)
		}
	}
}

func TestSummary(t *testing.T) {
	s := summary.New()
	for _, ev := range sample() {
		s.Add(&ev)
	}
	var buf bytes.Buffer
	if err := writeSummary(&buf, s); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"events: Added 3 (Added 1, Replaced 2); Updated 3 (Updated 1, Replaced 1, Sync 1); Deleted 2 (Deleted 2)",
		"informer: 2 lists (1 streaming), 1 relists, 0 watch restarts, 1 watch closes, 1 errors, 1 resyncs, 1 bookmarks",
		"simulated queue (the plugin's own workqueue, not your controller's): 3 adds, 1 retries, depth max 2, final 1; 1 simulated reconciles (1 failed), wait p50 1.5ms p99 1.5ms, work p50 200ms p99 200ms",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// deployment is a fuller object for the diff, wide and hot-loop goldens.
func deployment(rv string, gen, observed int64, replicas int64, image string, labels map[string]any, managers ...map[string]any) *unstructured.Unstructured {
	mf := []any{}
	for _, m := range managers {
		mf = append(mf, m)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"namespace": "demo", "name": "web", "resourceVersion": rv, "generation": gen, "labels": labels,
			"managedFields": mf,
			"ownerReferences": []any{
				map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "name": "not-the-controller", "uid": "1"},
				map[string]any{"apiVersion": "example.com/v1", "kind": "App", "name": "shop", "uid": "2", "controller": true},
			},
		},
		"spec": map[string]any{
			"replicas": replicas,
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "web", "image": image, "env": []any{map[string]any{"name": "LOG", "value": "info"}}},
				map[string]any{"name": "sidecar", "image": "envoy:1.30"},
			}}},
		},
		"status": map[string]any{"observedGeneration": observed},
	}}
}

func mf(manager, op, at string, fields ...string) map[string]any {
	f := map[string]any{}
	for _, x := range fields {
		f["f:"+x] = map[string]any{}
	}
	return map[string]any{"manager": manager, "operation": op, "apiVersion": "apps/v1", "time": "2026-11-21T05:00:" + at + "Z", "fieldsV1": map[string]any{"f:spec": f}}
}

// changeSample: updates with their old objects, as the informer delivers them, and a hot loop.
func changeSample(t *testing.T) []watch.Event {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	create := mf("kubectl-create", "Update", "00", "replicas", "template")
	app := map[string]any{"app": "web"}
	v1 := deployment("10", 1, 1, 1, "nginx:1.27", app, create)
	v2 := deployment("11", 2, 1, 3, "nginx:1.27", app, create, mf("kubectl-scale", "Update", "01", "replicas"))
	v3 := deployment("12", 3, 2, 3, "nginx:1.28", map[string]any{"app": "web", "tier": "front"}, create, mf("kubectl-edit", "Update", "02", "template"))
	v3.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["env"] = []any{map[string]any{"name": "LOG", "value": "debug"}}
	v4 := deployment("13", 3, 3, 3, "nginx:1.28", map[string]any{"app": "web", "tier": "front"}, create, mf("kubectl-edit", "Update", "02", "template"))
	v4.Object["status"] = map[string]any{"observedGeneration": int64(3)}
	v5 := deployment("14", 3, 3, 3, "nginx:1.28", map[string]any{"app": "web", "tier": "front"}, create, mf("kubectl-edit", "Update", "02", "template"))
	upd := func(s int, old, cur *unstructured.Unstructured, delta watch.Delta) watch.Event {
		return watch.Event{
			Type:            watch.Updated,
			Time:            at(s),
			Resource:        deploy,
			Namespace:       "demo",
			Name:            "web",
			ResourceVersion: cur.GetResourceVersion(),
			Obj: watch.ObjectInfo{
				OldResourceVersion: old.GetResourceVersion(),
				Delta:              delta,
				Object:             cur,
				OldObject:          old,
			},
		}
	}
	events := []watch.Event{
		{Type: watch.Informer, Time: at(0), Lifecycle: watch.LifecycleInfo{Info: &watch.InformerInfo{ClientGoVersion: "v0.37.1", Queue: "RealFIFO", AtomicEvents: true, WatchList: true, Namespace: "demo", Resources: []discovery.Resource{deploy}}}},
		{Type: watch.Added, Time: at(0), Resource: deploy, Namespace: "demo", Name: "web", ResourceVersion: "10", Obj: watch.ObjectInfo{InitialList: true, Delta: watch.DeltaReplaced, Object: v1}},
		upd(1, v1, v2, watch.DeltaUpdated), // short: inline
		upd(2, v2, v3, watch.DeltaUpdated), // long: a block
		upd(3, v3, v4, watch.DeltaReplaced),
		upd(4, v4, v5, watch.DeltaUpdated), // only the resourceVersion
		{Type: watch.Updated, Time: at(5), Resource: deploy, Namespace: "demo", Name: "web", ResourceVersion: "14", Obj: watch.ObjectInfo{OldResourceVersion: "14", Delta: watch.DeltaSync, Object: v5, OldObject: v5}},
	}
	// Two controllers fighting over spec.replicas: the detector reports the fifth update.
	h := analysis.New(analysis.Config{HotLoopUpdates: 10, HotLoopWindow: 30 * time.Second})
	prev := v5
	for i := range 5 {
		manager, replicas := "autoscaler", int64(5)
		if i%2 == 1 {
			manager, replicas = "deployer", 3
		}
		cur := deployment(fmt.Sprint(20+i), 3, 3, replicas, "nginx:1.28", map[string]any{"app": "web", "tier": "front"}, create, mf(manager, "Update", fmt.Sprintf("%02d", 10+i), "replicas"))
		ev := upd(10+i, prev, cur, watch.DeltaUpdated)
		out := h.Analyze(nil, &ev)
		if len(out) > 1 && i != 4 {
			t.Errorf("hot loop reported at update %d, want 4", i)
		}
		events = append(events, out...)
		prev = cur
	}
	if events[len(events)-1].Type != watch.HotLoop {
		t.Fatal("no hot loop reported")
	}
	events = append(events, watch.Event{Type: watch.Deleted, Time: at(20), Resource: deploy, Namespace: "demo", Name: "web", ResourceVersion: "30", Obj: watch.ObjectInfo{Delta: watch.DeltaDeleted, Object: prev}})
	return events
}

func TestChangeGoldens(t *testing.T) {
	t.Setenv("TZ", "UTC")
	time.Local = time.UTC
	events := changeSample(t)
	golden(t, "human-changes.txt", render(t, Options{}, events))
	golden(t, "human-diff.txt", render(t, Options{Diff: "inline"}, events))
	golden(t, "human-diff-color.txt", render(t, Options{Diff: "inline", Color: true}, events))
	golden(t, "human-diff-full.txt", render(t, Options{Diff: "full"}, events))
	golden(t, "human-wide.txt", render(t, Options{Output: "wide"}, events))
	golden(t, "human-relative.txt", render(t, Options{Timestamps: "relative", NoHeaders: true, Diff: "inline"}, events))
	golden(t, "human-no-timestamps.txt", render(t, Options{Timestamps: "none"}, events))
	golden(t, "events-diff.ndjson", render(t, Options{Output: "json", Diff: "inline", PluginVersion: "v1.0.0"}, events))
	golden(t, "events-diff.yaml", render(t, Options{Output: "yaml", Diff: "full", PluginVersion: "v1.0.0"}, events))
	golden(t, "template.txt", render(t, Options{Output: `jsonpath={.type} {.name} {.changes[*].path}{"\n"}`, Diff: "inline"}, events)+
		render(t, Options{Output: `go-template={{.type}}{{if eq .type "Updated"}}{{range .managers}} by {{.manager}}{{end}}{{end}}`}, events))
}

// secretUpdate changes a Secret's values (the password keeps its length) and its last-applied
// annotation.
func secretUpdate() []watch.Event {
	secret := func(rv, password, token, applied string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"namespace": "demo", "name": "db", "resourceVersion": rv,
				"annotations": map[string]any{lastAppliedAnnotation: applied},
				"managedFields": []any{map[string]any{"manager": "kubectl-edit", "operation": "Update", "apiVersion": "v1",
					"time": "2026-11-21T05:00:0" + rv + "Z", "fieldsV1": map[string]any{"f:data": map[string]any{"f:password": map[string]any{}}}}},
			},
			"data":       map[string]any{"password": password, "same": "c2FtZXNhbWU="},
			"stringData": map[string]any{"token": token},
		}}
	}
	old := secret("5", "aHVudGVyMg==", "hunter2", `{"data":{"password":"aHVudGVyMg=="}}`)
	cur := secret("6", "c2VjcmV0Mg==", "s3cr3t!", `{"data":{"password":"c2VjcmV0Mg=="}}`)
	return []watch.Event{
		{Type: watch.Informer, Time: t0, Lifecycle: watch.LifecycleInfo{Info: &watch.InformerInfo{Resources: []discovery.Resource{secrets}}}},
		{Type: watch.Added, Time: t0, Resource: secrets, Namespace: "demo", Name: "db", ResourceVersion: "5", Obj: watch.ObjectInfo{Delta: watch.DeltaAdded, Object: old}},
		{Type: watch.Updated, Time: t0.Add(time.Second), Resource: secrets, Namespace: "demo", Name: "db", ResourceVersion: "6", Obj: watch.ObjectInfo{OldResourceVersion: "5", Delta: watch.DeltaUpdated, Object: cur, OldObject: old}},
		{Type: watch.Deleted, Time: t0.Add(2 * time.Second), Resource: secrets, Namespace: "demo", Name: "db", ResourceVersion: "7", Obj: watch.ObjectInfo{Delta: watch.DeltaDeleted, Object: cur}},
	}
}

// No output form shows a Secret value, and a change of value still shows as a change.
func TestSecretsNeverLeak(t *testing.T) {
	leaks := []string{"aHVudGVyMg==", "hunter2", "c2VjcmV0Mg==", "s3cr3t!", "c2FtZXNhbWU=", "secret2"}
	forms := []struct {
		name string
		opts Options
		want []string // proof that the change shows
	}{
		{"human", Options{}, []string{"by kubectl-edit (Update)"}},
		{"wide", Options{Output: "wide"}, nil},
		{"diff inline", Options{Diff: "inline"}, []string{"data.password: <redacted: 12 bytes> → <redacted: 12 bytes>", "stringData.token: <redacted: 7 bytes> → <redacted: 7 bytes>"}},
		{"diff full", Options{Diff: "full"}, []string{"-  password: '<redacted: 12 bytes>'", "+  password: '<redacted: 12 bytes, changed>'", "+    kubectl.kubernetes.io/last-applied-configuration: '<redacted: 36 bytes, changed>'", "   same: '<redacted: 12 bytes>'"}},
		{"diff color", Options{Diff: "inline", Color: true}, nil},
		{"json", Options{Output: "json", Diff: "full"}, []string{`{"path":"data.password","old":"\u003credacted: 12 bytes\u003e","new":"\u003credacted: 12 bytes\u003e"}`}},
		{"yaml", Options{Output: "yaml", Diff: "full"}, []string{"path: data.password"}},
		{"jsonpath", Options{Output: `jsonpath={.object.data.password} {.object.stringData} {.object.metadata.annotations} {.changes} {.diff}`, Diff: "full"}, []string{"<redacted: 12 bytes>"}},
		{"go-template", Options{Output: `go-template={{.object}} {{.changes}} {{.diff}}`, Diff: "full"}, []string{"<redacted: 12 bytes>"}},
	}
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			out := render(t, f.opts, secretUpdate())
			for _, leak := range leaks {
				if strings.Contains(out, leak) {
					t.Errorf("leaks %q:\n%s", leak, out)
				}
			}
			for _, w := range f.want {
				if !strings.Contains(out, w) {
					t.Errorf("lacks %q:\n%s", w, out)
				}
			}
		})
	}
	shown := render(t, Options{Diff: "inline", ShowSecrets: true}, secretUpdate())
	if !strings.Contains(shown, `data.password: "aHVudGVyMg==" → "c2VjcmV0Mg=="`) {
		t.Errorf("--show-secrets --diff does not show the values:\n%s", shown)
	}
}

// hostileUpdate changes an annotation to text a terminal would act on, and a very long line.
func hostileUpdate() []watch.Event {
	evil := "x\x1b]8;;http://evil\x07y\rz\x1b[2J\u009b31m\u202e"
	long := strings.Repeat("long line ", 2000)
	mk := func(rv, ann string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"namespace": "demo", "name": "c" + evil, "resourceVersion": rv, "generation": int64(1),
				"labels":          map[string]any{"k" + evil: "v" + evil},
				"annotations":     map[string]any{"note" + evil: ann, "long": long + ann},
				"ownerReferences": []any{map[string]any{"kind": "K" + evil, "name": "n" + evil, "controller": true}},
				"managedFields":   []any{map[string]any{"manager": "m" + evil, "operation": "Update", "time": rv}},
			},
			"data": map[string]any{"k" + evil: ann + "\nsecond line"},
		}}
	}
	cm := discovery.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	old, cur := mk("1", "before"+evil), mk("2", "after"+evil)
	upd := watch.Event{Type: watch.Updated, Time: t0, Resource: cm, Namespace: "demo", Name: "c" + evil, ResourceVersion: "2", Obj: watch.ObjectInfo{OldResourceVersion: "1", Delta: watch.DeltaUpdated, Object: cur, OldObject: old}}
	h := analysis.New(analysis.Config{HotLoopUpdates: 1, HotLoopWindow: time.Minute})
	h.Analyze(nil, &upd)
	out := h.Analyze(nil, &upd)
	if len(out) != 2 {
		panic("no hot loop")
	}
	hl := &out[1]
	return []watch.Event{
		{Type: watch.Informer, Time: t0, Lifecycle: watch.LifecycleInfo{Info: &watch.InformerInfo{Namespace: "demo" + evil, LabelSelector: "a=" + evil, Resources: []discovery.Resource{cm}}}},
		{Type: watch.Added, Time: t0, Resource: cm, Namespace: "demo", Name: "c" + evil, ResourceVersion: "1\x1b[2J", Obj: watch.ObjectInfo{Delta: watch.DeltaAdded, Object: old}},
		upd, *hl,
		{Type: watch.Error, Time: t0, Resource: cm, Lifecycle: watch.LifecycleInfo{Reason: "R" + evil, Message: "M" + evil}},
	}
}

// Server text never reaches a terminal raw, in any human form: no control bytes but the line
// ends without color, no OSC or BEL (only the printer's own SGR colors) with color.
func TestHostileTextAllForms(t *testing.T) {
	for _, opts := range []Options{
		{}, {Output: "wide"}, {Diff: "inline"}, {Diff: "full"}, {Timestamps: "relative"},
		{Output: `jsonpath={.name} {.object.metadata.annotations} {.changes}{"\n"}`, Diff: "inline"},
		{Output: `go-template={{.name}} {{.reason}} {{.managers}} {{.fields}}`},
		{Output: "yaml", Diff: "full"}, {Output: "json", Diff: "full"},
	} {
		for _, color := range []bool{false, true} {
			opts.Color = color
			out := render(t, opts, hostileUpdate())
			body := out
			if color {
				if strings.Contains(out, "\x1b]") || strings.Contains(out, "\x07") {
					t.Errorf("%+v: OSC or BEL in %q", opts, out)
				}
				body = strings.NewReplacer(colorReset, "", colorRed, "", colorGreen, "", colorYellow, "", colorBlue, "", colorMagent, "", colorCyan, "", colorDim, "").Replace(out)
			}
			for i, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
				if strings.ContainsAny(line, "\x1b\x07\r\u009b\u202e") {
					t.Errorf("%+v: raw control bytes in line %d: %q", opts, i+1, line)
				}
				if opts.Output == "" && opts.Diff != "full" && len(line) > 2000 {
					t.Errorf("%+v: line %d is %d bytes long", opts, i+1, len(line))
				}
			}
		}
	}
}

// A template that fails on one event says so on ErrOut and the stream goes on; without ErrOut,
// Print returns the error. A template that does not parse fails like kubectl.
func TestTemplateErrors(t *testing.T) {
	events := changeSample(t)
	var errOut bytes.Buffer
	out := render(t, Options{Output: `go-template={{.type}} {{index .managers 0}}`, ErrOut: &errOut}, events)
	if !strings.Contains(out, "Updated map[manager:kubectl-scale operation:Update subresource:]\n") {
		t.Errorf("output:\n%s", out)
	}
	if !strings.HasPrefix(errOut.String(), "error: Informer event: error executing template") || strings.Count(errOut.String(), "\n") < 3 {
		t.Errorf("errors:\n%s", errOut.String())
	}
	p := New(io.Discard, Options{Output: `go-template={{index .managers 0}}`})
	if err := p.Print(&events[0]); err == nil || !strings.Contains(err.Error(), "Informer event: error executing template") {
		t.Errorf("Print without ErrOut: %v", err)
	}
	for output, want := range map[string]string{
		"jsonpath={.type":    "error parsing jsonpath {.type, unclosed action",
		"go-template={{.x":   "error parsing template {{.x, template: output:1: unclosed action",
		"jsonpath=":          "template format specified but no template given",
		"custom-columns=A:B": `unable to match a printer suitable for the output format "custom-columns=A:B", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,template,templatefile,wide,yaml`,
	} {
		if err := validateOutput(output); err == nil || err.Error() != want {
			t.Errorf("ValidateOutput(%q) = %v, want %q", output, err, want)
		}
		if err := New(io.Discard, Options{Output: OutputFormat(output)}).Print(&events[0]); err == nil {
			t.Errorf("Print with -o %q did not fail", output)
		}
	}
}

// watch NAME of an object the initial list did not have: the Synced line says so, in kubectl's
// words, in human output and as notFound in JSON.
func TestSyncedNotFound(t *testing.T) {
	ev := watch.Event{
		Type:     watch.Synced,
		Time:     t0,
		Resource: deploy,
		Lifecycle: watch.LifecycleInfo{
			Items:    0,
			Duration: 3 * time.Millisecond,
			NotFound: &watch.ObjectKey{Namespace: "demo", Name: "web"},
		},
		ResourceVersion: "100",
	}
	human := render(t, Options{Timestamps: "none"}, []watch.Event{ev})
	if want := `Synced      deployments.apps  cache synced: 0 objects in 3ms; deployments.apps "web" not found in namespace "demo" (yet): waiting for it` + "\n"; human != want {
		t.Errorf("human:\n%q\nwant\n%q", human, want)
	}
	js := render(t, Options{Output: "json"}, []watch.Event{ev})
	if want := `"items":0,"durationMs":3,"notFound":{"namespace":"demo","name":"web"}}`; !strings.Contains(js, want) {
		t.Errorf("json: %s\nwant it to contain %s", js, want)
	}
	ev.Lifecycle.NotFound = &watch.ObjectKey{Name: "web"}
	if human := render(t, Options{Timestamps: "none"}, []watch.Event{ev}); !strings.HasSuffix(human, `deployments.apps "web" not found (yet): waiting for it`+"\n") {
		t.Errorf("human, no namespace: %q", human)
	}
	ev.Lifecycle.NotFound = nil
	if js := render(t, Options{Output: "json"}, []watch.Event{ev}); strings.Contains(js, "notFound") {
		t.Errorf("notFound without a name asked for: %s", js)
	}
}

// A reconcile's triggers: one named, several listed, many shown as the first, a count and the
// newest; a requeue said first.
func TestTriggerSummary(t *testing.T) {
	tr := func(rv string, managers ...string) watch.Trigger {
		return watch.Trigger{Type: watch.Updated, ResourceVersion: rv, Managers: managers}
	}
	tests := []struct {
		name string
		ev   watch.Event
		want string
	}{
		{"none", watch.Event{}, ""},
		{"one", watch.Event{Queued: watch.QueuedInfo{TriggerCount: 1, Triggers: []watch.Trigger{tr("5", "kube-controller-manager")}}}, "trigger: Updated rv=5 (by kube-controller-manager)"},
		{"three", watch.Event{Queued: watch.QueuedInfo{TriggerCount: 3, Triggers: []watch.Trigger{tr("5"), tr("6"), tr("7", "a", "b")}}}, "3 events coalesced: Updated rv=5, Updated rv=6, Updated rv=7 (by a, b)"},
		{"ownership", watch.Event{Queued: watch.QueuedInfo{TriggerCount: 1, Triggers: []watch.Trigger{{Type: watch.Updated, ResourceVersion: "8", Managers: []string{"a", "b"}, Attribution: diff.RuleOwnership}}}}, "trigger: Updated rv=8 (by one of a, b)"},
		{"capped", watch.Event{Queued: watch.QueuedInfo{TriggerCount: 40, Triggers: []watch.Trigger{tr("1"), tr("2"), tr("38"), tr("39"), tr("40")}}}, "40 events coalesced: Updated rv=1, … 38 more …, Updated rv=40"},
		{"a resync is no update", watch.Event{Queued: watch.QueuedInfo{TriggerCount: 2, Triggers: []watch.Trigger{{Type: watch.Updated, Delta: watch.DeltaSync, ResourceVersion: "9"}, tr("10", "a")}}}, "2 events coalesced: Sync rv=9, Updated rv=10 (by a)"},
		{"an owned object's event", watch.Event{Queued: watch.QueuedInfo{TriggerCount: 1, Triggers: []watch.Trigger{{Type: watch.Updated, Delta: watch.DeltaUpdated, ResourceVersion: "11", Managers: []string{"kube-controller-manager"}, Resource: "replicasets.apps", Key: "demo/web-1"}}}}, "trigger: Updated of replicasets.apps demo/web-1 rv=11 (by kube-controller-manager)"},
		{"requeue", watch.Event{Queued: watch.QueuedInfo{Requeue: true}}, "requeued after a failed reconcile"},
		{"a write its log names", watch.Event{Queued: watch.QueuedInfo{TriggerCount: 1, Triggers: []watch.Trigger{{Type: watch.Updated, ResourceVersion: "12", Managers: []string{"widget"}, Attribution: diff.RuleReconcile}}}}, "trigger: Updated rv=12 (by widget's reconcile, from its log)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := triggerSummary(&tt.ev); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// The summary gives events per reconcile and what --predicate saved, live and from a recording.
func TestSummaryTriggersAndPredicates(t *testing.T) {
	s := summary.New()
	for _, ev := range []watch.Event{
		{Type: watch.Updated, Obj: watch.ObjectInfo{Delta: watch.DeltaUpdated}},
		{Type: watch.Updated, Obj: watch.ObjectInfo{Delta: watch.DeltaUpdated, Filtered: "generation"}},
		{Type: watch.Updated, Obj: watch.ObjectInfo{Delta: watch.DeltaUpdated, Filtered: "generation"}},
		{Type: watch.Reconciled, Queued: watch.QueuedInfo{TriggerCount: 3}},
		{Type: watch.Reconciled, Queued: watch.QueuedInfo{TriggerCount: 1}},
	} {
		s.Add(&ev)
	}
	s.Predicates = &summary.PredicateReport{Predicates: "generation", Unfiltered: 9}
	var b strings.Builder
	if err := writeSummary(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"4 events enqueued, 2.00 per reconcile", "predicates generation: 2 of 3 object events filtered; reconciles: 2 with them, 9 without (a shadow queue fed every event): 7 saved"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	s.Predicates = &summary.PredicateReport{Predicates: "generation", Replay: true, Reconciles: 4, Saved: 3}
	b.Reset()
	_ = writeSummary(&b, s)
	if want := "of 4 recorded reconciles, 3 ran only for filtered events and would not have run"; !strings.Contains(b.String(), want) {
		t.Errorf("replay summary lacks %q:\n%s", want, b.String())
	}
}

// An update managedFields attribute to nobody, named through a controller's reconcile: the line
// says the name came from its log, in human output and in JSON.
func TestReconcileAttributionLine(t *testing.T) {
	old := testutil.Object("example.com/v1", "Widget", "demo", "bare", "1")
	cur := testutil.Object("example.com/v1", "Widget", "demo", "bare", "2")
	cur.Object["status"] = map[string]any{"phase": "Ready"}
	widgets := discovery.Resource{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true}
	ev := watch.UpdateOf(widgets, old, cur, time.Unix(1, 0))
	ev.Obj.Attribution = &diff.Attribution{Rule: diff.RuleReconcile, Managers: []diff.Manager{{Manager: "widget", Operation: "Reconcile"}},
		Reconcile: &diff.ReconcileRef{Controller: "widget", ReconcileID: "3f1c9a7e-5b2d-4c1e-9f00-0123456789ab"}}
	if human := render(t, Options{}, []watch.Event{ev}); !strings.Contains(human, "  by widget (its reconcile 3f1c9a7e, from its log)") {
		t.Errorf("human: %s", human)
	}
	noID := ev
	noID.Obj.Attribution = &diff.Attribution{Rule: diff.RuleReconcile, Managers: ev.Obj.Attribution.Managers, Reconcile: &diff.ReconcileRef{Controller: "widget"}}
	if human := render(t, Options{}, []watch.Event{noID}); !strings.Contains(human, "  by widget (one of its reconciles, from its log)") {
		t.Errorf("human, no reconcile id: %s", human)
	}
	js := render(t, Options{Output: "json"}, []watch.Event{ev})
	if !strings.Contains(js, `"attribution":"reconcile","reconcile":{"controller":"widget","reconcileID":"3f1c9a7e-5b2d-4c1e-9f00-0123456789ab"}`) ||
		!strings.Contains(js, `"managers":[{"manager":"widget","operation":"Reconcile","subresource":""}]`) {
		t.Errorf("json: %s", js)
	}
}

// A delete named through the reconcile of its owner: the Deleted line and the DELETE request's
// update say who deleted it, from which reconcile of which object, in human output and in JSON,
// and a replay decodes it back.
func TestDeleteAttributionLine(t *testing.T) {
	dep := testutil.Object("apps/v1", "Deployment", "demo", "shop", "7")
	deployments := discovery.Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true}
	ref := diff.ReconcileRef{Controller: "widget", ReconcileID: "3f1c9a7e-5b2d-4c1e-9f00-0123456789ab", Kind: "widget", Namespace: "demo", Name: "shop"}
	ev := watch.Event{
		Type:            watch.Deleted,
		Time:            time.Unix(1, 0),
		Resource:        deployments,
		Namespace:       "demo",
		Name:            "shop",
		ResourceVersion: "7",
		Obj:             watch.ObjectInfo{Object: dep, Attribution: &diff.Attribution{Rule: diff.RuleDelete, Managers: []diff.Manager{{Manager: "widget", Operation: "Reconcile"}}, Reconcile: &ref}},
	}
	if human := render(t, Options{}, []watch.Event{ev}); !strings.Contains(human, "  deleted by widget (its reconcile 3f1c9a7e of widget demo/shop, from its log)") {
		t.Errorf("human: %s", human)
	}
	js := render(t, Options{Output: "json"}, []watch.Event{ev})
	want := `"attribution":"delete","reconcile":{"controller":"widget","reconcileID":"3f1c9a7e-5b2d-4c1e-9f00-0123456789ab","kind":"widget","namespace":"demo","name":"shop"}`
	if !strings.Contains(js, want) || !strings.Contains(js, `"managers":[{"manager":"widget","operation":"Reconcile","subresource":""}]`) {
		t.Errorf("json: %s\nwant %s", js, want)
	}
	back, err := recording.DecodeLine([]byte(strings.TrimSpace(js)))
	if err != nil {
		t.Fatal(err)
	}
	if a := back.Event.Obj.Attribution; a == nil || a.Rule != diff.RuleDelete || a.Reconcile == nil || *a.Reconcile != ref {
		t.Errorf("decoded attribution %+v, want the delete by %+v", a, ref)
	}
	requested := testutil.Object("apps/v1", "Deployment", "demo", "shop", "8")
	requested.SetDeletionTimestamp(&metav1.Time{Time: time.Unix(1, 0)})
	upd := watch.Event{
		Type: watch.Updated,
		Obj: watch.ObjectInfo{
			Delta:              watch.DeltaUpdated,
			OldResourceVersion: "7",
			Object:             requested,
			OldObject:          dep,
			Attribution:        &diff.Attribution{Rule: diff.RuleDelete, Managers: ev.Obj.Attribution.Managers, Reconcile: &ref},
		},
		Time:            time.Unix(1, 0),
		Resource:        deployments,
		Namespace:       "demo",
		Name:            "shop",
		ResourceVersion: "8",
	}
	if human := render(t, Options{}, []watch.Event{upd}); !strings.Contains(human, "  deletion requested (DELETE) by widget (its reconcile 3f1c9a7e of widget demo/shop, from its log)") {
		t.Errorf("human, the DELETE request's update: %s", human)
	}
}
