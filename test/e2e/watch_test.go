package e2e

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	watchapi "k8s.io/apimachinery/pkg/watch"
)

const await = 60 * time.Second

func deployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}
}

func is(typ, name string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == typ && (name == "" || m["name"] == name) }
}

func wantField(t *testing.T, line map[string]any, field string, want any) {
	t.Helper()
	if got := line[field]; got != want {
		t.Errorf("%s line: %s = %#v, want %#v (line: %v)", line["type"], field, got, want, line)
	}
}

// The foundation's promise: Added, Updated and Deleted with exactly the server's
// resourceVersions, initialList for what was there before, oldResourceVersion on updates.
func TestWatchDeploymentsJSON(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	deploys := cluster.Clientset.AppsV1().Deployments(ns)
	pre, err := deploys.Create(ctx, deployment(ns, "pre", 1), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The test's own watch sees the delete's resourceVersion, which the API does not return.
	w, err := deploys.Watch(ctx, metav1.ListOptions{ResourceVersion: pre.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	p := cluster.RunPlugin(t, ctx, "watch", "deploy", "-n", ns, "-o", "json")
	info := p.AwaitJSON(t, await, is("Informer", ""))
	res := info["resources"].([]any)[0].(map[string]any)
	if res["resource"] != "deployments" || res["group"] != "apps" || res["version"] != "v1" {
		t.Errorf("Informer resources = %v", info["resources"])
	}
	added := p.AwaitJSON(t, await, is("Added", "pre"))
	wantField(t, added, "resourceVersion", pre.ResourceVersion)
	wantField(t, added, "initialList", true)
	wantField(t, added, "namespace", ns)
	wantField(t, added, "kind", "Deployment")
	wantField(t, added, "group", "apps")
	wantField(t, added, "resource", "deployments")
	if _, err := time.Parse(time.RFC3339Nano, added["time"].(string)); err != nil {
		t.Errorf("time %q: %v", added["time"], err)
	}
	obj := added["object"].(map[string]any)
	if obj["kind"] != "Deployment" || obj["metadata"].(map[string]any)["name"] != "pre" {
		t.Errorf("object is not the deployment: %v", obj)
	}
	p.AwaitJSON(t, await, is("Synced", ""))

	web, err := deploys.Create(ctx, deployment(ns, "web", 1), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	added = p.AwaitJSON(t, await, is("Added", "web"))
	wantField(t, added, "resourceVersion", web.ResourceVersion)
	wantField(t, added, "initialList", false)
	if _, ok := added["oldResourceVersion"]; ok {
		t.Errorf("Added carries oldResourceVersion: %v", added)
	}

	scaled, err := deploys.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	updated := p.AwaitJSON(t, await, is("Updated", "web"))
	wantField(t, updated, "resourceVersion", scaled.ResourceVersion)
	wantField(t, updated, "oldResourceVersion", web.ResourceVersion)
	if got := updated["object"].(map[string]any)["spec"].(map[string]any)["replicas"]; got != float64(3) {
		t.Errorf("updated object replicas = %v, want 3", got)
	}

	if err := deploys.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleteRV := awaitServerDelete(t, w, "web")
	deleted := p.AwaitJSON(t, await, is("Deleted", "web"))
	wantField(t, deleted, "resourceVersion", deleteRV)
	wantField(t, deleted, "tombstone", false)

	// Interrupt: exit 0, quickly (the process is awaited, not timed).
	p.Stop(t)
	// stderr holds the exit summary and nothing else.
	if !strings.HasPrefix(p.Stderr(), "--- kubectl informer: summary") || !strings.Contains(p.Stderr(), "events: Added 2 (Added 1, Replaced 1); Updated 1 (Updated 1); Deleted 1 (Deleted 1)") {
		t.Errorf("stderr is not the summary: %q", p.Stderr())
	}
}

func awaitServerDelete(t *testing.T, w watchapi.Interface, name string) string {
	t.Helper()
	timeout := time.After(await)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("test watch closed")
			}
			if d, ok := ev.Object.(*appsv1.Deployment); ok && ev.Type == watchapi.Deleted && d.Name == name {
				return d.ResourceVersion
			}
		case <-timeout:
			t.Fatalf("no DELETED event for %s", name)
		}
	}
}

// Every name kubectl accepts for a resource resolves to it.
func TestResolveNames(t *testing.T) {
	ns := newNamespace(t, cluster)
	tests := []struct{ arg, resource, group string }{
		{"deployments", "deployments", "apps"},
		{"deploy", "deployments", "apps"},
		{"deployment", "deployments", "apps"},
		{"Deployment", "deployments", "apps"},
		{"deployments.apps", "deployments", "apps"},
		{"deployments.v1.apps", "deployments", "apps"},
		{"cm", "configmaps", ""},
		{"wdg", "widgets", "example.com"},
		{"Widget", "widgets", "example.com"},
		{"widgets.v1.example.com", "widgets", "example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			// The Synced line is awaited, not expected within a --timeout: a loaded machine is slow.
			p := cluster.RunPlugin(t, context.Background(), "watch", tt.arg, "-n", ns, "-o", "json")
			p.AwaitJSON(t, await, is("Synced", ""))
			p.Stop(t)
			stdout := strings.Join(p.Strings(), "\n")
			if !strings.Contains(stdout, `"resource":"`+tt.resource+`","kind"`) ||
				!strings.Contains(stdout, `"group":"`+tt.group+`","version":"v1","resource":"`+tt.resource+`"`) {
				t.Errorf("output does not name %s.%s:\n%s", tt.resource, tt.group, stdout)
			}
		})
	}
}

// A custom resource: create, patch and delete a Widget, seen through its short name.
func TestWatchCustomResource(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	widgets := cluster.Dynamic.Resource(gvr).Namespace(ns)
	p := cluster.RunPlugin(t, ctx, "watch", "wdg", "-n", ns, "-o", "json")
	p.AwaitJSON(t, await, is("Synced", ""))

	created := cluster.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "w1", Size: 1, Color: "red"})
	added := p.AwaitJSON(t, await, is("Added", "w1"))
	wantField(t, added, "resourceVersion", created.GetResourceVersion())
	wantField(t, added, "kind", "Widget")
	wantField(t, added, "group", "example.com")

	patched, err := widgets.Patch(ctx, "w1", types.MergePatchType, []byte(`{"spec":{"color":"blue"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	updated := p.AwaitJSON(t, await, is("Updated", "w1"))
	wantField(t, updated, "resourceVersion", patched.GetResourceVersion())
	wantField(t, updated, "oldResourceVersion", created.GetResourceVersion())

	if err := widgets.Delete(ctx, "w1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := p.AwaitJSON(t, await, is("Deleted", "w1"))
	if deleted["resourceVersion"] == patched.GetResourceVersion() || deleted["resourceVersion"] == "" {
		t.Errorf("Deleted resourceVersion %v should be the delete's, newer than %s", deleted["resourceVersion"], patched.GetResourceVersion())
	}
}

// Human output: one line per event, flushed live, with the resourceVersion change on updates.
func TestWatchHumanOutput(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	cms := cluster.Clientset.CoreV1().ConfigMaps(ns)
	p := cluster.RunPlugin(t, ctx, "watch", "configmaps", "-n", ns, "--color", "never")
	awaitLine(t, p, "cache synced")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	line := awaitLine(t, p, ns+"/c1")
	if !strings.Contains(line, "Added") || !strings.Contains(line, "rv="+cm.ResourceVersion) {
		t.Errorf("add line: %q", line)
	}
	cm.Data["k"] = "v2"
	cm2, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	line = awaitLine(t, p, "rv="+cm.ResourceVersion+"→"+cm2.ResourceVersion)
	if !strings.Contains(line, "Updated") {
		t.Errorf("update line: %q", line)
	}
}

// awaitLine is PluginRun.AwaitLine within await: the next stdout line containing s.
func awaitLine(t *testing.T, p *testenv.PluginRun, s string) string {
	t.Helper()
	return p.AwaitLine(t, await, s)
}

// Bad input: one line on stderr starting with "error: ", exit 1, no stack trace, no klog.
func TestBadInput(t *testing.T) {
	ns := newNamespace(t, cluster)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown resource", []string{"watch", "foo", "-n", ns}, `error: the server doesn't have a resource type "foo"`},
		{"typo gets a suggestion", []string{"watch", "deploymnets", "-n", ns}, `did you mean "deployments"?`},
		{"malformed label selector", []string{"watch", "cm", "-n", ns, "-l", "a=(b"}, `error: invalid label selector "a=(b"`},
		{"malformed field selector", []string{"watch", "cm", "-n", ns, "--field-selector", "a"}, `error: invalid field selector "a"`},
		{"negative timeout", []string{"watch", "cm", "-n", ns, "--timeout", "-5s"}, "error: --timeout must be >= 0"},
		{"unknown output", []string{"watch", "cm", "-n", ns, "-o", "xml"}, `error: unable to match a printer suitable for the output format "xml"`},
		{"unreachable server", []string{"watch", "cm", "-n", ns, "--server", "https://127.0.0.1:" + closedPort(t), "--request-timeout", "5s"}, "error: Unable to connect to the server"},
		{"missing kubeconfig", []string{"watch", "cm", "--kubeconfig", "/nonexistent/kubeconfig"}, "error: "},
		{"no resource", []string{"watch"}, "error: "},
		// Bad values are refused before any request: with no server to reach, the error is
		// still about the flag, not the connection.
		{"bad selector before any request", []string{"watch", "cm", "-l", "a=(b", "--server", "https://127.0.0.1:" + closedPort(t)}, `error: invalid label selector "a=(b"`},
		{"negative timeout before any request", []string{"watch", "cm", "--timeout", "-5s", "--server", "https://127.0.0.1:" + closedPort(t)}, "error: --timeout must be >= 0"},
		{"unknown output before any request", []string{"watch", "cm", "-o", "xml", "--server", "https://127.0.0.1:" + closedPort(t)}, `error: unable to match a printer suitable for the output format "xml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runPlugin(t, cluster, tt.args...)
			if r.code != 1 {
				t.Errorf("exit code %d, want 1", r.code)
			}
			first, _, _ := strings.Cut(r.stderr, "\n")
			if !strings.Contains(first, tt.want) {
				t.Errorf("stderr %q does not contain %q", r.stderr, tt.want)
			}
			for _, bad := range []string{"goroutine ", "panic", ".go:"} {
				if strings.Contains(r.stderr, bad) {
					t.Errorf("stderr has %q: %s", bad, r.stderr)
				}
			}
			// Usage errors may add usage text; server-side errors are exactly one line.
			if tt.name != "no resource" && strings.Count(strings.TrimRight(r.stderr, "\n"), "\n") != 0 {
				t.Errorf("stderr is more than one line:\n%s", r.stderr)
			}
			if r.stdout != "" && !strings.HasPrefix(r.stdout, "Usage") {
				t.Errorf("stdout not empty: %q", r.stdout)
			}
		})
	}
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	return port
}
