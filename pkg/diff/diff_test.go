package diff

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kubectl-informer/kubectl-informer/internal/testutil"
)

// obj decodes JSON the way objects arrive (numbers as int64/float64).
func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	return testutil.JSON(t, s)
}

// short renders changes as "path: old → new" with "-" for absent, for compact tables.
func short(changes []Change) []string {
	out := []string{}
	for _, c := range changes {
		o, n := "-", "-"
		if c.HasOld {
			b, _ := json.Marshal(c.Old)
			o = string(b)
		}
		if c.HasNew {
			b, _ := json.Marshal(c.New)
			n = string(b)
		}
		out = append(out, c.Path+": "+o+" → "+n)
	}
	return out
}

func TestCompute(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     []string
	}{
		{"nothing", `{"a":1}`, `{"a":1}`, []string{}},
		{"scalar", `{"spec":{"replicas":1}}`, `{"spec":{"replicas":3}}`, []string{"spec.replicas: 1 → 3"}},
		{"int and float are equal", `{"a":1}`, `{"a":1.0}`, []string{}},
		{"resourceVersion and managedFields left out, generation kept",
			`{"metadata":{"resourceVersion":"1","generation":1,"managedFields":[{"manager":"a"}]}}`,
			`{"metadata":{"resourceVersion":"2","generation":2,"managedFields":[{"manager":"b"}]}}`,
			[]string{"metadata.generation: 1 → 2"}},
		{"label added, removed, changed",
			`{"metadata":{"labels":{"app":"web","gone":"x","tier":"a"}}}`,
			`{"metadata":{"labels":{"app":"api","new":"y","tier":"a"}}}`,
			[]string{`metadata.labels.app: "web" → "api"`, `metadata.labels.gone: "x" → -`, `metadata.labels.new: - → "y"`}},
		{"map appears: walked to its leaves",
			`{"metadata":{}}`, `{"metadata":{"annotations":{"a":"1","b":"2"}}}`,
			[]string{`metadata.annotations.a: - → "1"`, `metadata.annotations.b: - → "2"`}},
		{"map disappears", `{"data":{"k":"v"}}`, `{}`, []string{`data.k: "v" → -`}},
		{"empty map appears", `{}`, `{"data":{}}`, []string{`data: - → {}`}},
		{"keys that are not identifiers",
			`{"metadata":{"labels":{"app.kubernetes.io/name":"a"}},"data":{"config.yaml":"x"}}`,
			`{"metadata":{"labels":{"app.kubernetes.io/name":"b"}},"data":{"config.yaml":"y"}}`,
			[]string{`data["config.yaml"]: "x" → "y"`, `metadata.labels["app.kubernetes.io/name"]: "a" → "b"`}},
		{"containers keyed by name",
			`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1"},{"name":"side","image":"s:1"}]}}}}`,
			`{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"s:1"},{"name":"web","image":"nginx:2"}]}}}}`,
			[]string{`spec.template.spec.containers[name=web].image: "nginx:1" → "nginx:2"`}},
		{"keyed element added and removed",
			`{"spec":{"containers":[{"name":"a","image":"x"},{"name":"b","image":"y"}]}}`,
			`{"spec":{"containers":[{"name":"a","image":"x"},{"name":"c","image":"z"}]}}`,
			[]string{`spec.containers[name=c]: - → {"image":"z","name":"c"}`, `spec.containers[name=b]: {"image":"y","name":"b"} → -`}},
		{"env keyed by name, nested",
			`{"spec":{"containers":[{"name":"a","env":[{"name":"LOG","value":"info"}]}]}}`,
			`{"spec":{"containers":[{"name":"a","env":[{"name":"LOG","value":"debug"}]}]}}`,
			[]string{`spec.containers[name=a].env[name=LOG].value: "info" → "debug"`}},
		{"conditions keyed by type",
			`{"status":{"conditions":[{"type":"Ready","status":"False"},{"type":"Available","status":"True"}]}}`,
			`{"status":{"conditions":[{"type":"Ready","status":"True"},{"type":"Available","status":"True"}]}}`,
			[]string{`status.conditions[type=Ready].status: "False" → "True"`}},
		{"ports keyed by containerPort when unnamed",
			`{"ports":[{"containerPort":80,"protocol":"TCP"}]}`,
			`{"ports":[{"containerPort":80,"protocol":"UDP"}]}`,
			[]string{`ports[containerPort=80].protocol: "TCP" → "UDP"`}},
		{"key values that need quoting",
			`{"l":[{"name":"a b","v":1}]}`, `{"l":[{"name":"a b","v":2}]}`,
			[]string{`l[name="a b"].v: 1 → 2`}},
		{"duplicate names fall back to the next key",
			`{"m":[{"name":"v","mountPath":"/a","readOnly":true},{"name":"v","mountPath":"/b"}]}`,
			`{"m":[{"name":"v","mountPath":"/a","readOnly":false},{"name":"v","mountPath":"/b"}]}`,
			[]string{`m[mountPath=/a].readOnly: true → false`}},
		{"scalar lists by index",
			`{"spec":{"args":["a","b"]}}`, `{"spec":{"args":["a","c","d"]}}`,
			[]string{`spec.args[1]: "b" → "c"`, `spec.args[2]: - → "d"`}},
		{"finalizer removed", `{"metadata":{"finalizers":["x"]}}`, `{"metadata":{"finalizers":[]}}`,
			[]string{`metadata.finalizers[0]: "x" → -`}},
		{"unkeyed objects by index",
			`{"rules":[{"verbs":["get"]}]}`, `{"rules":[{"verbs":["list"]}]}`,
			[]string{`rules[0].verbs[0]: "get" → "list"`}},
		{"type change", `{"a":{"b":1}}`, `{"a":"x"}`, []string{`a: {"b":1} → "x"`}},
		{"null is a value", `{"a":null}`, `{"a":1}`, []string{`a: null → 1`}},
		{"list appears whole", `{}`, `{"l":[1,2]}`, []string{`l: - → [1,2]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := short(Compute(obj(t, tt.old), obj(t, tt.new)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Compute (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComputeSecret(t *testing.T) {
	old := obj(t, `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"data\":{\"k\":\"b2xk\"}}","note":"a"}},"data":{"k":"b2xk","same":"eA=="},"stringData":{"s":"x"}}`)
	new := obj(t, `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"data\":{\"k\":\"bmV3\"}}","note":"b"}},"data":{"k":"bmV3","same":"eA=="}}`)
	changes := ComputeSecret(old, new)
	got := map[string]bool{}
	for _, c := range changes {
		got[c.Path] = c.Sensitive
	}
	want := map[string]bool{
		`data.k`:                    true,
		`stringData.s`:              true,
		`metadata.annotations.note`: false,
		`metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]`: true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sensitive paths (-want +got):\n%s", diff)
	}
}

func managed(entries ...string) string {
	return `{"metadata":{"managedFields":[` + strings.Join(entries, ",") + `]}}`
}

func TestChangedManagers(t *testing.T) {
	kubectlCreate := `{"manager":"kubectl-create","operation":"Update","apiVersion":"v1","time":"2026-01-01T00:00:00Z","fieldsV1":{"f:data":{"f:a":{}}}}`
	kubectlEdit := `{"manager":"kubectl-edit","operation":"Update","apiVersion":"v1","time":"2026-01-01T00:00:05Z","fieldsV1":{"f:data":{"f:b":{}}}}`
	kubectlEditLater := `{"manager":"kubectl-edit","operation":"Update","apiVersion":"v1","time":"2026-01-01T00:00:09Z","fieldsV1":{"f:data":{"f:b":{}}}}`
	kubectlEditMore := `{"manager":"kubectl-edit","operation":"Update","apiVersion":"v1","time":"2026-01-01T00:00:05Z","fieldsV1":{"f:data":{"f:b":{},"f:c":{}}}}`
	kubeletStatus := `{"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2026-01-01T00:00:05Z","subresource":"status","fieldsV1":{"f:status":{}}}`
	applied := `{"manager":"my-ctl","operation":"Apply","apiVersion":"v1","time":"2026-01-01T00:00:05Z","fieldsV1":{"f:spec":{}}}`
	editV2 := `{"manager":"kubectl-edit","operation":"Update","apiVersion":"v2","time":"2026-01-01T00:00:05Z","fieldsV1":{"f:spec":{}}}`
	tests := []struct {
		name     string
		old, new string
		want     []Manager
	}{
		{"new entry", managed(kubectlCreate), managed(kubectlCreate, kubectlEdit), []Manager{{"kubectl-edit", "Update", ""}}},
		{"time changed", managed(kubectlCreate, kubectlEdit), managed(kubectlCreate, kubectlEditLater), []Manager{{"kubectl-edit", "Update", ""}}},
		{"fields changed", managed(kubectlCreate, kubectlEdit), managed(kubectlCreate, kubectlEditMore), []Manager{{"kubectl-edit", "Update", ""}}},
		{"nothing changed: same second, same fields", managed(kubectlCreate, kubectlEdit), managed(kubectlCreate, kubectlEdit), nil},
		{"subresource", managed(kubectlCreate), managed(kubectlCreate, kubeletStatus), []Manager{{"kubelet", "Update", "status"}}},
		{"apply", managed(kubectlCreate), managed(kubectlCreate, applied), []Manager{{"my-ctl", "Apply", ""}}},
		{"one manager, two apiVersions: named once", managed(kubectlCreate), managed(kubectlCreate, kubectlEdit, editV2), []Manager{{"kubectl-edit", "Update", ""}}},
		{"entry removed: nobody", managed(kubectlCreate, kubectlEdit), managed(kubectlCreate), nil},
		{"fields taken over: the taker, not the loser",
			managed(kubectlCreate, kubectlEditMore),
			managed(`{"manager":"kubectl-create","operation":"Update","apiVersion":"v1","time":"2026-01-01T00:00:00Z","fieldsV1":{"f:data":{}}}`,
				kubectlEditMore, `{"manager":"rotator","operation":"Update","apiVersion":"v1","time":"2026-01-01T00:00:00Z","fieldsV1":{"f:data":{"f:a":{}}}}`),
			[]Manager{{"rotator", "Update", ""}}},
		{"no managedFields", `{}`, `{"metadata":{}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ChangedManagers(obj(t, tt.old), obj(t, tt.new))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ChangedManagers (-want +got):\n%s", diff)
			}
		})
	}
	if s := (Manager{"kubelet", "Update", "status"}).String(); s != "kubelet (Update status)" {
		t.Errorf("String() = %q", s)
	}
}

func TestUnified(t *testing.T) {
	old := obj(t, `{"metadata":{"name":"web","resourceVersion":"1","managedFields":[{"manager":"a"}]},"spec":{"replicas":1,"paused":false}}`)
	new := obj(t, `{"metadata":{"name":"web","resourceVersion":"2","managedFields":[{"manager":"b"}]},"spec":{"replicas":3,"paused":false}}`)
	got, err := Unified(old, new, "rv=1", "rv=2")
	if err != nil {
		t.Fatal(err)
	}
	want := `--- rv=1
+++ rv=2
@@ -2,4 +2,4 @@
   name: web
 spec:
   paused: false
-  replicas: 1
+  replicas: 3`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Unified (-want +got):\n%s", diff)
	}
	if same, _ := Unified(old, old, "a", "b"); same != "" {
		t.Errorf("no change gives %q", same)
	}
	if old["metadata"].(map[string]any)["resourceVersion"] != "1" {
		t.Error("Prune modified its argument")
	}
	hostile, err := YAML(map[string]any{"a": "x\x1b]8;;http://e\x07y\rz"})
	if err != nil || strings.ContainsAny(hostile, "\x1b\x07\r") {
		t.Errorf("YAML leaves control bytes: %q, %v", hostile, err)
	}
}

func TestHotLoopDetector(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	type obs struct {
		key      string
		at       float64
		managers string // comma-separated
		paths    string
	}
	u := func(key string, s float64, managers, paths string) obs { return obs{key, s, managers, paths} }
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, ",")
	}
	tests := []struct {
		name    string
		max     int
		window  time.Duration
		updates []obs
		want    map[int]*HotLoop // index of the update that reports → report
	}{
		{
			name: "over the limit within the window", max: 3, window: 10 * time.Second,
			updates: []obs{u("a", 0, "ctl", "spec.x"), u("a", 1, "ctl", "spec.x"), u("a", 2, "ctl", "spec.x,spec.y"), u("a", 3, "ctl", "spec.x"), u("a", 4, "ctl", "spec.x")},
			want:    map[int]*HotLoop{3: {Key: "a", Reason: "updates", Managers: []string{"ctl"}, Updates: 4, Window: 10 * time.Second, Fields: []string{"spec.x"}}},
		},
		{
			name: "spread out: never more than the limit in one window", max: 3, window: 10 * time.Second,
			updates: []obs{u("a", 0, "ctl", "x"), u("a", 4, "ctl", "x"), u("a", 8, "ctl", "x"), u("a", 12, "ctl", "x"), u("a", 16, "ctl", "x"), u("a", 20, "ctl", "x")},
			want:    map[int]*HotLoop{},
		},
		{
			name: "keys counted apart", max: 2, window: 10 * time.Second,
			updates: []obs{u("a", 0, "c", "x"), u("b", 0, "c", "x"), u("a", 1, "c", "x"), u("b", 1, "c", "x"), u("b", 2, "c", "x")},
			want:    map[int]*HotLoop{4: {Key: "b", Reason: "updates", Managers: []string{"c"}, Updates: 3, Window: 10 * time.Second, Fields: []string{"x"}}},
		},
		{
			name: "two managers taking turns: four hand-overs", max: 100, window: 30 * time.Second,
			updates: []obs{u("a", 0, "ctl-a", "spec.mode"), u("a", 1, "ctl-b", "spec.mode"), u("a", 2, "ctl-a", "spec.mode"), u("a", 3, "ctl-b", "spec.mode"), u("a", 4, "ctl-a", "spec.mode,metadata.labels.x")},
			want:    map[int]*HotLoop{4: {Key: "a", Reason: "alternating", Managers: []string{"ctl-a", "ctl-b"}, Updates: 5, Window: 30 * time.Second, Fields: []string{"spec.mode"}}},
		},
		{
			name: "three hand-overs are not enough", max: 100, window: 30 * time.Second,
			updates: []obs{u("a", 0, "ctl-a", "x"), u("a", 1, "ctl-b", "x"), u("a", 2, "ctl-a", "x"), u("a", 3, "ctl-b", "x")},
			want:    map[int]*HotLoop{},
		},
		{
			name: "a third manager breaks the run", max: 100, window: 30 * time.Second,
			updates: []obs{u("a", 0, "A", "x"), u("a", 1, "B", "x"), u("a", 2, "A", "x"), u("a", 3, "C", "x"), u("a", 4, "A", "x"), u("a", 5, "C", "x")},
			want:    map[int]*HotLoop{},
		},
		{
			name: "the alternating pair is named, not earlier managers", max: 100, window: 30 * time.Second,
			updates: []obs{u("a", 0, "A", "x"), u("a", 1, "B", "x"), u("a", 2, "C", "x"), u("a", 3, "B", "x"), u("a", 4, "C", "x"), u("a", 5, "B", "x")},
			want:    map[int]*HotLoop{5: {Key: "a", Reason: "alternating", Managers: []string{"B", "C"}, Updates: 6, Window: 30 * time.Second, Fields: []string{"x"}}},
		},
		{
			name: "updates without a manager are skipped", max: 100, window: 30 * time.Second,
			updates: []obs{u("a", 0, "A", "x"), u("a", 1, "", "x"), u("a", 2, "B", "x"), u("a", 3, "A", "x"), u("a", 4, "B", "x"), u("a", 5, "A", "x")},
			want:    map[int]*HotLoop{5: {Key: "a", Reason: "alternating", Managers: []string{"A", "B"}, Updates: 6, Window: 30 * time.Second, Fields: []string{"x"}}},
		},
		{
			name: "once per episode; a quiet window starts a new one", max: 2, window: 10 * time.Second,
			updates: []obs{
				u("a", 0, "c", "x"), u("a", 1, "c", "x"), u("a", 2, "c", "x"), u("a", 3, "c", "x"), u("a", 9, "c", "x"), u("a", 18, "c", "x"),
				u("a", 30, "c", "y"), u("a", 31, "c", "y"), u("a", 32, "c", "z"),
			},
			want: map[int]*HotLoop{
				2: {Key: "a", Reason: "updates", Managers: []string{"c"}, Updates: 3, Window: 10 * time.Second, Fields: []string{"x"}},
				8: {Key: "a", Reason: "updates", Managers: []string{"c"}, Updates: 3, Window: 10 * time.Second, Fields: []string{"y"}},
			},
		},
		{
			name: "no path changes twice: every path", max: 1, window: 10 * time.Second,
			updates: []obs{u("a", 0, "c", "b"), u("a", 1, "c", "a")},
			want:    map[int]*HotLoop{1: {Key: "a", Reason: "updates", Managers: []string{"c"}, Updates: 2, Window: 10 * time.Second, Fields: []string{"a", "b"}}},
		},
		{
			name: "disabled", max: 0, window: 10 * time.Second,
			updates: []obs{u("a", 0, "c", "x"), u("a", 0, "c", "x")},
			want:    map[int]*HotLoop{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewHotLoopDetector(tt.max, tt.window)
			got := map[int]*HotLoop{}
			for i, o := range tt.updates {
				if h := d.Observe(o.key, Update{At: at(o.at), Managers: split(o.managers), Paths: split(o.paths)}); h != nil {
					got[i] = h
				}
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(HotLoop{}, "Loop", "Suggestion")); diff != "" {
				t.Errorf("reports (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHotLoopForgetAndSweep(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := NewHotLoopDetector(1, time.Second)
	d.Observe("a", Update{At: t0})
	d.Forget("a")
	if h := d.Observe("a", Update{At: t0}); h != nil {
		t.Errorf("a forgotten key reported at its first update: %+v", h)
	}
	for i := range 2048 {
		d.Observe(fmt.Sprint(i), Update{At: t0.Add(time.Duration(i) * time.Hour)})
	}
	if d.Len() >= 1024 {
		t.Errorf("%d keys still tracked after their episodes ended", d.Len())
	}
	var nilDetector *HotLoopDetector
	if nilDetector.Observe("a", Update{At: t0}) != nil {
		t.Error("nil detector reports")
	}
}
