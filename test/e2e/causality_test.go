package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// ownersChain is a line's owner chain as "Kind/name" links.
func ownersChain(m map[string]any) []string { return ownersField(m, "") }

// ownerUIDs is the uids of a line's owner chain.
func ownerUIDs(m map[string]any) []string { return ownersField(m, "uid") }

// ownersField is one field of each link of a line's owner chain ("": "Kind/name").
func ownersField(m map[string]any, field string) []string {
	var out []string
	os, _ := m["owners"].([]any)
	for _, o := range os {
		om, _ := o.(map[string]any)
		if field == "" {
			out = append(out, fmt.Sprintf("%v/%v", om["kind"], om["name"]))
		} else {
			out = append(out, fmt.Sprint(om[field]))
		}
	}
	return out
}

func rvOf(t *testing.T, m map[string]any) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(fmt.Sprint(m["resourceVersion"]), 10, 64)
	if err != nil {
		t.Fatalf("line without a numeric resourceVersion: %v", m)
	}
	return n
}

func regarding(m map[string]any) map[string]any {
	r, _ := m["regarding"].(map[string]any)
	return r
}

// replicaSetOf is the ReplicaSet a ScalingReplicaSet Event's note names ("Scaled down replica
// set web-abc from 1 to 0" → web-abc).
func replicaSetOf(event map[string]any) string {
	note, _ := event["note"].(string)
	_, rest, _ := strings.Cut(note, "replica set ")
	name, _, _ := strings.Cut(rest, " ")
	return name
}

// `watch deploy web --owned --events` during a rollout on the real control plane (deployment and
// replicaset controllers, scheduler, kwok nodes): the Deployment, its old and new ReplicaSets and
// their pods going Pending → Running, each with its owner chain, and the deployment controller's
// ScalingReplicaSet Events; nothing of another Deployment in the namespace (scaled meanwhile),
// nor of a bare pod carrying web's label. The recording replays the same lines.
func TestRealOwnedEventsRollout(t *testing.T) {
	c := realControlPlane(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	if _, err := c.Kubectl(ctx, "create", "deployment", "other", "-n", ns, "--image=example.com/other:1", "--replicas=1"); err != nil {
		t.Fatal(err)
	}
	loner := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "loner", Namespace: ns, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/loner:1"}}},
	}
	if _, err := c.Clientset.CoreV1().Pods(ns).Create(ctx, loner, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "owned.ndjson")
	p := c.RunPlugin(t, ctx, "watch", "deploy", "web", "--owned", "--events", "-n", ns, "-o", "json", "--record", file)
	human := c.RunPlugin(t, ctx, "watch", "deploy", "web", "--owned", "--events", "-n", ns, "--color", "never", "--timestamps", "none")
	awaitSeen(t, p, await, "deployments synced", func(m map[string]any) bool { return m["type"] == "Synced" && m["resource"] == "deployments" })
	awaitSeen(t, p, await, "events synced", func(m map[string]any) bool { return m["type"] == "Synced" && m["resource"] == "events" })
	awaitLine(t, human, "cache synced")

	// Owned informers start as owners appear: the pods informer once web's first ReplicaSet
	// exists. A pod that kwok runs before that informer has listed shows up Running in its
	// initial list (true, but not the transition this test is about), so web starts at zero
	// replicas and scales up once the pods informer has synced.
	if _, err := c.Kubectl(ctx, "create", "deployment", "web", "-n", ns, "--image=example.com/web:1", "--replicas=0"); err != nil {
		t.Fatal(err)
	}
	awaitSeen(t, p, await, "the owned pods informer synced", func(m map[string]any) bool { return m["type"] == "Synced" && m["resource"] == "pods" })
	if _, err := c.Kubectl(ctx, "scale", "deployment", "web", "-n", ns, "--replicas=2"); err != nil {
		t.Fatal(err)
	}
	running := map[string]bool{}
	awaitSeen(t, p, 2*await, "2 pods of web going 0/1 Pending → 1/1 Running", func(m map[string]any) bool {
		if stateIs("pods", "", map[string]string{"previousSummary": "0/1 Pending", "summary": "1/1 Running"})(m) {
			running[m["name"].(string)] = true
		}
		return len(running) == 2
	})
	// The other Deployment changes meanwhile: its lines and Events pass the same informers
	// before web's rollout does, and must not be shown.
	if _, err := c.Kubectl(ctx, "scale", "deployment", "other", "-n", ns, "--replicas=2"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Kubectl(ctx, "set", "image", "deployment/web", "-n", ns, "web=example.com/web:2"); err != nil {
		t.Fatal(err)
	}
	p.AwaitJSON(t, 2*await, stateIs("deployments", "web",
		map[string]string{"previous": "InProgress", "status": "Current", "summary": "2/2 ready, 2 updated, 2 available"}))
	scaledDown := awaitSeen(t, p, await, "a ScalingReplicaSet Event scaling an old ReplicaSet down to 0", func(m map[string]any) bool {
		note, _ := m["note"].(string)
		return m["type"] == "KubeEvent" && m["reason"] == "ScalingReplicaSet" && strings.HasPrefix(note, "Scaled down replica set web-") && strings.HasSuffix(note, "from 1 to 0")
	})
	t.Logf("last event awaited: %v", scaledDown["note"])
	// Each ReplicaSet's scale-up Event, asserted on below: the deployment controller writes its
	// Events in its own time, so await them rather than assume them by the scale-down.
	for _, rs := range []string{"old", "new"} {
		awaitSeen(t, p, await, "a ScalingReplicaSet Event scaling the "+rs+" ReplicaSet up", func(m map[string]any) bool {
			note, _ := m["note"].(string)
			if m["type"] != "KubeEvent" || m["reason"] != "ScalingReplicaSet" || !strings.HasPrefix(note, "Scaled up replica set web-") {
				return false
			}
			// The old ReplicaSet is the one scaled down to 0.
			old := strings.HasPrefix(note, "Scaled up replica set "+replicaSetOf(scaledDown)+" ")
			return old == (rs == "old")
		})
	}

	p.Stop(t)
	live := p.Strings()
	var lines []map[string]any
	for _, l := range live {
		var m map[string]any
		if err := jsonLine([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %s", l)
		}
		lines = append(lines, m)
	}
	// Index the stream: where each object was first added, what each pod went through.
	var webUID string
	added := map[string]int{} // resource/name → index of its Added line
	addedLine := map[string]map[string]any{}
	uids := map[string]bool{}
	rsNames := map[string]bool{}
	for i, m := range lines {
		typ, res, name := m["type"], fmt.Sprint(m["resource"]), fmt.Sprint(m["name"])
		if typ == "Added" || typ == "Updated" || typ == "Deleted" {
			if name == "other" || strings.HasPrefix(name, "other-") || name == "loner" {
				t.Errorf("line %d about an object outside web's tree: %s %s %s", i, typ, res, name)
			}
			if u, _ := objectOf(m).Object["metadata"].(map[string]any); u != nil {
				uids[fmt.Sprint(u["uid"])] = true
			}
			if typ == "Added" {
				if _, ok := added[res+"/"+name]; !ok {
					added[res+"/"+name], addedLine[res+"/"+name] = i, m
				}
			}
		}
		switch {
		case typ == "Added" && res == "deployments" && name == "web":
			webUID = fmt.Sprint(objectOf(m).GetUID())
			if len(ownersChain(m)) != 0 {
				t.Errorf("the watched Deployment has an owner chain: %v", ownersChain(m))
			}
		case (typ == "Added" || typ == "Updated") && res == "replicasets":
			rsNames[name] = true
			if got := ownersChain(m); len(got) != 1 || got[0] != "Deployment/web" || ownerUIDs(m)[0] != webUID {
				t.Errorf("ReplicaSet %s owners %v (uids %v), want [Deployment/web] with uid %s", name, got, ownerUIDs(m), webUID)
			}
		case (typ == "Added" || typ == "Updated") && res == "pods":
			got := ownersChain(m)
			rs := objectOf(m).GetOwnerReferences()
			if len(got) != 2 || got[0] != "Deployment/web" || len(rs) != 1 || got[1] != "ReplicaSet/"+rs[0].Name || ownerUIDs(m)[1] != string(rs[0].UID) {
				t.Errorf("pod %s owners %v, want [Deployment/web ReplicaSet/<its owner>]", name, got)
			}
		}
	}
	if webUID == "" {
		t.Fatal("no Added line for deployment web")
	}
	// What each informer cost the API server, the owned and Events ones included, by name.
	costed := map[string]bool{}
	for _, m := range lines {
		if m["type"] == "ApiStats" {
			if m["resource"] == "" || m["resource"] == nil {
				t.Errorf("an ApiStats line without its resource: %v", m)
			}
			costed[fmt.Sprint(m["resource"])] = true
		}
	}
	for _, r := range []string{"deployments", "replicasets", "pods", "events"} {
		if !costed[r] {
			t.Errorf("no ApiStats line for %s (got %v)", r, costed)
		}
	}
	if len(rsNames) != 2 {
		t.Errorf("ReplicaSets shown: %v, want web's old and new", rsNames)
	}
	// Owners come before what they own: a held line is released after its owner's.
	for key, i := range added {
		m := addedLine[key]
		for _, ref := range objectOf(m).GetOwnerReferences() {
			owner := strings.ToLower(ref.Kind) + "s/" + ref.Name
			if j, ok := added[owner]; !ok || j > i {
				t.Errorf("%s (line %d) added before its owner %s (line %v)", key, i, owner, j)
			}
		}
	}
	// The deployment controller's Events: a scale-up for each ReplicaSet, about web, each after
	// the ReplicaSet's creation in resourceVersion order.
	scaledUp := map[string]bool{}
	for i, m := range lines {
		if m["type"] != "KubeEvent" {
			continue
		}
		r := regarding(m)
		if !uids[fmt.Sprint(r["uid"])] {
			t.Errorf("KubeEvent line %d regards %v/%v, not a shown object: %v", i, r["kind"], r["name"], m["note"])
		}
		if m["reason"] != "ScalingReplicaSet" {
			continue
		}
		if r["kind"] != "Deployment" || r["name"] != "web" || m["reportingController"] != "deployment-controller" || m["eventType"] != "Normal" {
			t.Errorf("ScalingReplicaSet line %d: %v", i, m)
		}
		for rs := range rsNames {
			if note := fmt.Sprint(m["note"]); strings.HasPrefix(note, "Scaled up replica set "+rs+" ") {
				scaledUp[rs] = true
				if rvOf(t, m) <= rvOf(t, addedLine["replicasets/"+rs]) {
					t.Errorf("%q at rv %v, not after the ReplicaSet's creation at rv %v", note, m["resourceVersion"], addedLine["replicasets/"+rs]["resourceVersion"])
				}
			}
		}
	}
	if len(scaledUp) != 2 {
		t.Errorf("ScalingReplicaSet scale-ups seen for %v, want both ReplicaSets %v", scaledUp, rsNames)
	}
	// Each running pod: Added Pending, Running later in the stream.
	for pod := range running {
		first, run := -1, -1
		for i, m := range lines {
			if m["resource"] == "pods" && m["name"] == pod {
				if first < 0 {
					first = i
				}
				if stateOf(m)["summary"] == "1/1 Running" && run < 0 {
					run = i
				}
			}
		}
		if s := stateOf(lines[first]); first < 0 || s["summary"] != "0/1 Pending" || run < first {
			t.Errorf("pod %s: first line %d (%v), Running at %d", pod, first, s, run)
		}
	}

	hl := awaitLine(t, human, "Scaled down")
	t.Logf("human: %s", hl)
	var ex []string
	for _, l := range human.All() {
		ex = append(ex, string(l))
	}
	t.Logf("human output:\n%s", strings.Join(ex, "\n"))
	for _, want := range []string{"owners=Deployment/web>ReplicaSet/web-", "KubeEvent   events.events.k8s.io", "Normal ScalingReplicaSet: Scaled up replica set web-"} {
		if !strings.Contains(strings.Join(ex, "\n"), want) {
			t.Errorf("human output has no %q", want)
		}
	}
	replayJSON(t, file, live)

	// Started after the rollout, a watch gets the Events so far in its initial list. The list
	// comes by name (other's Events before web's); they are shown in the order they happened,
	// each with its own time. The controllers' Events have a time to the second: other is
	// scaled once more in a second after web's last Event, so that its Event, listed before
	// web's, happened after them.
	var lastWeb time.Time
	for _, m := range lines {
		if m["type"] == "KubeEvent" && regarding(m)["name"] == "web" {
			at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(m["eventTime"]))
			if err != nil {
				t.Fatalf("a KubeEvent without its eventTime: %v", m)
			}
			if at.After(lastWeb) {
				lastWeb = at
			}
		}
	}
	time.Sleep(time.Until(lastWeb.Truncate(time.Second).Add(time.Second))) // the clock, not a guess
	if _, err := c.Kubectl(ctx, "scale", "deployment", "other", "-n", ns, "--replicas=3"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(await); ; time.Sleep(100 * time.Millisecond) {
		evs, err := c.Clientset.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(evs.Items, func(e eventsv1.Event) bool { return strings.HasSuffix(e.Note, "from 2 to 3") }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no Event of other's scale-up from 2 to 3")
		}
	}
	late := c.RunPlugin(t, ctx, "watch", "deploy", "--events", "-n", ns, "-o", "json")
	awaitSeen(t, late, await, "deployments synced", func(m map[string]any) bool { return m["type"] == "Synced" && m["resource"] == "deployments" })
	awaitSeen(t, late, await, "events synced", func(m map[string]any) bool { return m["type"] == "Synced" && m["resource"] == "events" })
	var times []time.Time
	var order []string
	regards := map[string]bool{}
	late.Stop(t)
	for _, l := range late.Strings() {
		var m map[string]any
		if err := jsonLine([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %s", l)
		}
		if m["type"] != "KubeEvent" || m["initialList"] != true {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(m["eventTime"]))
		if err != nil {
			t.Fatalf("an initial-list KubeEvent without its eventTime: %s", l)
		}
		times = append(times, at)
		name := fmt.Sprint(regarding(m)["name"])
		regards[name] = true
		order = append(order, at.Format("15:04:05.000000")+" "+name+": "+fmt.Sprint(m["note"]))
	}
	t.Logf("initial-list KubeEvents:\n%s", strings.Join(order, "\n"))
	if len(times) < 4 || !regards["web"] || !regards["other"] {
		t.Fatalf("initial list has %d KubeEvents, regarding %v; want web's and other's", len(times), regards)
	}
	for i := 1; i < len(times); i++ {
		if times[i].Before(times[i-1]) {
			t.Errorf("initial-list KubeEvent %d happened before the one shown ahead of it:\n%s", i, strings.Join(order, "\n"))
			break
		}
	}
}

// Without a name, every Deployment of the namespace is a root; with --metadata-only the owned
// informers follow ownerReferences from metadata alone (no spec.selector: they list the whole
// namespace, and say so), and Events are still read in full.
func TestRealOwnedMetadataOnly(t *testing.T) {
	c := realControlPlane(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	p := c.RunPlugin(t, ctx, "watch", "deploy", "--owned", "--events", "--metadata-only", "-n", ns, "-o", "json")
	awaitSeen(t, p, await, "deployments synced", func(m map[string]any) bool { return m["type"] == "Synced" && m["resource"] == "deployments" })
	loner := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "loner", Namespace: ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/loner:1"}}},
	}
	if _, err := c.Clientset.CoreV1().Pods(ns).Create(ctx, loner, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		if _, err := c.Kubectl(ctx, "create", "deployment", name, "-n", ns, "--image=example.com/"+name+":1", "--replicas=1"); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"a", "b"} {
		pod := awaitSeen(t, p, 2*await, "a pod of "+name+" with its chain", func(m map[string]any) bool {
			o := ownersChain(m)
			return m["resource"] == "pods" && m["type"] == "Added" && len(o) == 2 && o[0] == "Deployment/"+name && strings.HasPrefix(o[1], "ReplicaSet/"+name+"-")
		})
		if _, hasSpec := objectOf(pod).Object["spec"]; hasSpec {
			t.Errorf("--metadata-only pod line has a spec: %v", pod)
		}
		awaitSeen(t, p, await, "the scale-up Event of "+name, func(m map[string]any) bool {
			note, _ := m["note"].(string)
			return m["type"] == "KubeEvent" && m["reason"] == "ScalingReplicaSet" && regarding(m)["name"] == name && strings.HasPrefix(note, "Scaled up replica set "+name+"-")
		})
	}
	// The loner was created before both Deployments: the pods informer had it by then.
	p.Stop(t)
	lines := p.Strings()
	for _, l := range lines {
		if strings.Contains(l, `"name":"loner"`) {
			t.Errorf("a line about the bare pod: %s", l)
		}
	}
	if !strings.Contains(p.Stderr(), "note: --owned with --metadata-only") || !strings.Contains(p.Stderr(), "note: --events with --metadata-only") {
		t.Errorf("stderr does not say what --metadata-only cannot do: %s", p.Stderr())
	}
}

// A custom resource's tree: the widget-operator's Deployment (named by --owned-resources), and
// below it what the built-in controllers own, each with the chain from the Widget; the
// deployment controller's Events about the Deployment carry the Widget as their owner.
func TestRealOwnedCustomResource(t *testing.T) {
	t.Parallel() // its own namespace of a shared cluster (docs/testcluster.md, "Parallel tests")
	c := realControlPlane(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	op, err := c.StartOperator(ctx, testenv.OperatorOptions{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Stop() })
	p := c.RunPlugin(t, ctx, "watch", "widgets", "w1", "--owned", "--owned-resources", "deployments", "--events", "-n", ns, "-o", "json")
	info := p.AwaitJSON(t, await, is("Informer", ""))
	var owned []string
	for _, r := range info["ownedResources"].([]any) {
		owned = append(owned, fmt.Sprint(r.(map[string]any)["resource"]))
	}
	if strings.Join(owned, ",") != "deployments,replicasets,pods" {
		t.Errorf("ownedResources %v, want deployments,replicasets,pods", owned)
	}
	awaitSeen(t, p, await, "widgets synced", func(m map[string]any) bool { return m["type"] == "Synced" && m["resource"] == "widgets" })
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "w1", Size: 1, Color: "red"})
	awaitSeen(t, p, await, "the operator's Deployment owned by the Widget", func(m map[string]any) bool {
		o := ownersChain(m)
		return m["resource"] == "deployments" && m["name"] == "w1" && len(o) == 1 && o[0] == "Widget/w1"
	})
	awaitSeen(t, p, 2*await, "its pod Running, three owners deep", func(m map[string]any) bool {
		o := ownersChain(m)
		return stateIs("pods", "", map[string]string{"summary": "1/1 Running"})(m) &&
			len(o) == 3 && o[0] == "Widget/w1" && o[1] == "Deployment/w1" && strings.HasPrefix(o[2], "ReplicaSet/w1-")
	})
	awaitSeen(t, p, await, "the scale-up Event about the Deployment, with the Widget as owner", func(m map[string]any) bool {
		o := ownersChain(m)
		return m["type"] == "KubeEvent" && m["reason"] == "ScalingReplicaSet" && regarding(m)["name"] == "w1" && len(o) == 1 && o[0] == "Widget/w1"
	})
	p.Stop(t)
}

// Bad --owned input fails in one line, exit 1, no stack trace; a resource nothing is known to own
// says how to name what it owns, and the watch goes on.
func TestOwnedBadInput(t *testing.T) {
	ns := newNamespace(t, cluster)
	tests := []struct {
		name     string
		args     []string
		code     int
		wantLine string
	}{
		{"unknown owned resource", []string{"watch", "deploy", "--owned", "--owned-resources", "notakind", "-n", ns},
			1, `error: --owned-resources: the server doesn't have a resource type "notakind"`},
		{"cluster-scoped owned resource", []string{"watch", "deploy", "--owned", "--owned-resources", "nodes", "-n", ns},
			1, `error: --owned-resources: nodes is cluster-scoped, and only a cluster-scoped owner can own it (deployments.apps is namespaced)`},
		{"--owned-resources without --owned", []string{"watch", "deploy", "--owned-resources", "cm", "-n", ns},
			1, `error: --owned-resources requires --owned`},
		{"nothing known to be owned", []string{"watch", "cm", "--owned", "-n", ns, "--timeout", "1s", "--no-summary"},
			0, `warning: --owned: nothing is known to be owned by cm; name what it owns with --owned-resources (e.g. --owned-resources deployments,configmaps)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runPlugin(t, cluster, tt.args...)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != tt.code || lines[0] != tt.wantLine {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d, first line %q", r.code, r.stderr, tt.code, tt.wantLine)
			}
			if tt.code != 0 && (len(lines) != 1 || strings.Contains(r.stderr, "goroutine")) {
				t.Errorf("more than one line of error: %q", r.stderr)
			}
		})
	}
}
