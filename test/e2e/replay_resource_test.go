package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

// replay --resource takes the names watch takes (short names, kinds, groups), resolved against
// the recording's own resources; a name the recording has no resource for is an error, not an
// empty replay.
func TestReplayResourceNames(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	createConfigMaps(t, cluster.Clientset, ns, "cfg")
	labels := map[string]string{"app": "web"}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-1"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: deployment(ns, "web", 1).Spec.Template},
	}
	if _, err := cluster.Clientset.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Clientset.AppsV1().Deployments(ns).Create(ctx, deployment(ns, "web", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "rec.ndjson")
	live := cluster.RunPlugin(t, ctx, "watch", "cm,rs,deploy", "-n", ns, "-o", "json", "--record", file)
	for range 3 {
		live.AwaitJSON(t, await, is("Synced", ""))
	}
	live.StopWith(t, syscall.SIGTERM)

	for _, tt := range []struct{ arg, want string }{
		{"rs", "web-1"}, {"replicaset", "web-1"}, {"ReplicaSet", "web-1"}, {"replicasets.apps", "web-1"},
		{"deploy", "web"}, {"Deployment.apps", "web"}, {"cm", "cfg"}, {"configmap", "cfg"},
	} {
		res := runPlugin(t, cluster, "replay", file, "--resource", tt.arg, "--types", "Added", "-o", "jsonpath={.name}{\"\\n\"}", "--no-summary")
		if res.code != 0 || strings.TrimSpace(res.stdout) != tt.want {
			t.Errorf("replay --resource %s: exit %d, stdout %q, stderr %q; want %s", tt.arg, res.code, res.stdout, res.stderr, tt.want)
		}
	}
	for _, tt := range []struct{ arg, want string }{
		{"nosuch", `error: the recording has no resource type "nosuch" (it has: configmaps, deployments.apps, replicasets.apps)` + "\n"},
		{"po", `error: the recording has no resource type "po" (it has: configmaps, deployments.apps, replicasets.apps)` + "\n"},
		{"replicasts", `error: the recording has no resource type "replicasts" (it has: configmaps, deployments.apps, replicasets.apps); did you mean "replicasets"?` + "\n"},
	} {
		res := runPlugin(t, cluster, "replay", file, "--resource", tt.arg)
		if res.code != 1 || res.stdout != "" || res.stderr != tt.want {
			t.Errorf("replay --resource %s: exit %d, stdout %q, stderr %q; want exit 1 and %q", tt.arg, res.code, res.stdout, res.stderr, tt.want)
		}
	}
}

// The short names replay knows for built-in resources are the ones this API server serves.
func TestBuiltinShortNamesMatchServer(t *testing.T) {
	lists, err := cluster.Clientset.Discovery().ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	served := map[schema.GroupResource][]string{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(gv.Group, "example.com") {
			continue // the tests' custom resources
		}
		for _, ar := range l.APIResources {
			if len(ar.ShortNames) > 0 && !strings.Contains(ar.Name, "/") {
				served[schema.GroupResource{Group: gv.Group, Resource: ar.Name}] = ar.ShortNames
			}
		}
	}
	for gr, names := range served {
		if got := discovery.BuiltinShortNames[gr]; !slices.Equal(got, names) {
			t.Errorf("%s: the server's short names are %v, BuiltinShortNames has %v", gr, names, got)
		}
	}
	for gr, names := range discovery.BuiltinShortNames {
		if _, ok := served[gr]; !ok {
			t.Logf("%s (%v) is not served by this API server (not enabled by default?)", gr, names)
		}
	}
}
