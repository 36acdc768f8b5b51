package e2e

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

var regenerate = flag.Bool("regenerate", false, "record pkg/replay/testdata/configmaps.ndjson again (TestRecordReplayFixture)")

// fixture is the recording pkg/replay's tests and example replay.
const fixture = "../../pkg/replay/testdata/configmaps.ndjson"

// TestRecordReplayFixture records pkg/replay/testdata/configmaps.ndjson with `watch --record`
// against a test cluster of its own. It runs only when asked:
//
//	KUBEBUILDER_ASSETS=$(hack/testcluster/build.sh) go test ./test/e2e -run TestRecordReplayFixture -regenerate
//
// The story pkg/replay's tests need: an initial list of a, b, c in namespace demo (a streaming
// list); d added, a updated, d deleted; periodic resyncs (--resync 3s); the API server killed
// while b is deleted, c updated and e created through a second one; its return, a relist (b a
// tombstone, a unchanged, c changed, e new); then e updated on the new watch.
func TestRecordReplayFixture(t *testing.T) {
	if !*regenerate {
		t.Skip("records " + fixture + " only with -regenerate")
	}
	ctx := context.Background()
	c := testenv.StartT(t, testenv.Options{})
	c.PluginDir = cluster.PluginDir
	if _, err := c.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pre := createConfigMaps(t, c.Clientset, "demo", "a", "b", "c")
	rec := filepath.Join(t.TempDir(), "configmaps.ndjson")
	p := c.RunPlugin(t, ctx, "watch", "cm", "-n", "demo", "--resync", "3s", "--record", rec, "-o", "json", "--no-summary")
	p.AwaitJSON(t, await, is("Synced", ""))

	cms := c.Clientset.CoreV1().ConfigMaps("demo")
	createConfigMaps(t, c.Clientset, "demo", "d")
	p.AwaitJSON(t, await, is("Added", "d"))
	a := pre["a"].DeepCopy()
	a.Data["v"] = "2"
	if _, err := cms.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.AwaitJSON(t, await, is("Updated", "a"))
	if err := cms.Delete(ctx, "d", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p.AwaitJSON(t, await, is("Deleted", "d"))
	p.AwaitJSON(t, await, is("Resync", ""))

	e := c.Relist(t, ctx, testenv.RelistChanges{Namespace: "demo", Delete: "b", Update: "c", Create: "e"}).Created
	p.AwaitJSON(t, 3*await, is("Relist", ""))
	p.AwaitJSON(t, await, is("Added", "e"))

	e.Data["v"] = "2"
	if _, err := cms.Update(ctx, e, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.AwaitJSON(t, await, is("Updated", "e"))
	p.Stop(t)
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fixture, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes): now run go test ./pkg/replay", fixture, len(b))
}
