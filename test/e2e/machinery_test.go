package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// streamingModes runs f with streaming lists (WatchList, client-go's default) on and off.
func streamingModes(t *testing.T, f func(t *testing.T, streaming bool)) {
	for _, streaming := range []bool{true, false} {
		t.Run(fmt.Sprintf("watchlist=%v", streaming), func(t *testing.T) {
			t.Setenv("KUBE_FEATURE_WatchListClient", fmt.Sprint(streaming))
			f(t, streaming)
		})
	}
}

// streamingModesParallel is streamingModes for a test with a cluster of its own in each mode: it
// and its two runs are parallel tests, each run's mode in the environment it gives the plugin
// (RunPluginWith), not the process's (t.Setenv would reach every test, and panics in parallel).
func streamingModesParallel(t *testing.T, f func(t *testing.T, streaming bool, env []string)) {
	t.Parallel()
	for _, streaming := range []bool{true, false} {
		t.Run(fmt.Sprintf("watchlist=%v", streaming), func(t *testing.T) {
			t.Parallel()
			f(t, streaming, []string{"KUBE_FEATURE_WatchListClient=" + fmt.Sprint(streaming)})
		})
	}
}

func createConfigMaps(t *testing.T, cs kubernetes.Interface, ns string, names ...string) map[string]*corev1.ConfigMap {
	t.Helper()
	out := map[string]*corev1.ConfigMap{}
	for _, n := range names {
		cm, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(),
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out[n] = cm
	}
	return out
}

func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}

// The initial list: how it was fetched (LIST, or a streaming WATCH ending at a bookmark), the
// objects as Replaced deltas with initialList=true, then Synced, then live watch deltas.
func TestInitialList(t *testing.T) {
	streamingModes(t, func(t *testing.T, streaming bool) {
		ctx := context.Background()
		ns := newNamespace(t, cluster)
		pre := createConfigMaps(t, cluster.Clientset, ns, "a", "b")
		p := cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "-o", "json")
		info := p.AwaitJSON(t, await, is("Informer", ""))
		wantField(t, info, "watchList", streaming)
		wantField(t, info, "queue", "RealFIFO")
		if streaming {
			w := p.AwaitJSON(t, await, is("Watch", ""))
			wantField(t, w, "sendInitialEvents", true)
			b := p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Bookmark" && m["initialEventsEnd"] == true })
			if b["resourceVersion"] == "" {
				t.Errorf("bookmark without resourceVersion: %v", b)
			}
		} else {
			l := p.AwaitJSON(t, await, is("List", ""))
			wantField(t, l, "initial", true)
			wantField(t, l, "items", float64(2))
		}
		seen := map[string]bool{}
		for range pre {
			a := p.AwaitJSON(t, await, is("Added", ""))
			name := a["name"].(string)
			seen[name] = true
			wantField(t, a, "delta", "Replaced")
			wantField(t, a, "initialList", true)
			wantField(t, a, "resourceVersion", pre[name].ResourceVersion)
		}
		if !seen["a"] || !seen["b"] {
			t.Errorf("initial list delivered %v", seen)
		}
		synced := p.AwaitJSON(t, await, is("Synced", ""))
		wantField(t, synced, "items", float64(2))
		if !streaming {
			// The reflector opens the watch while the list's objects are processed: its line
			// may come before or after Synced.
			watching := func(m map[string]any) bool { return m["type"] == "Watch" && m["sendInitialEvents"] == false }
			p.AwaitSeen(t, await, "the Watch line", watching)
		}
		live := createConfigMaps(t, cluster.Clientset, ns, "c")
		a := p.AwaitJSON(t, await, is("Added", "c"))
		wantField(t, a, "delta", "Added")
		wantField(t, a, "initialList", false)
		wantField(t, a, "resourceVersion", live["c"].ResourceVersion)
	})
}

// A resync redelivers every cached object as a Sync delta with an unchanged resourceVersion,
// announced by a Resync line.
func TestResync(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	pre := createConfigMaps(t, cluster.Clientset, ns, "a", "b")
	p := cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "-o", "json", "--resync", "1s")
	info := p.AwaitJSON(t, await, is("Informer", ""))
	wantField(t, info, "resyncPeriod", "1s")
	p.AwaitJSON(t, await, is("Synced", ""))
	for round := 0; round < 2; round++ {
		r := p.AwaitJSON(t, await, is("Resync", ""))
		wantField(t, r, "items", float64(2))
		for range pre {
			u := p.AwaitJSON(t, await, is("Updated", ""))
			wantField(t, u, "delta", "Sync")
			name := u["name"].(string)
			wantField(t, u, "resourceVersion", pre[name].ResourceVersion)
			wantField(t, u, "oldResourceVersion", pre[name].ResourceVersion)
		}
	}
}

// A relist: the plugin's API server dies; a delete, an update and a create go through a second
// API server on the same etcd; the first comes back with a watch cache that starts after the
// plugin's last resourceVersion, so the informer must list again.
func TestRelist(t *testing.T) {
	streamingModesParallel(t, func(t *testing.T, _ bool, env []string) {
		ctx := context.Background()
		c := testenv.StartT(t, testenv.Options{})
		c.PluginDir = cluster.PluginDir
		ns := newNamespace(t, c)
		pre := createConfigMaps(t, c.Clientset, ns, "gone", "changed", "same")
		p := c.RunPluginWith(t, ctx, env, "watch", "cm", "-n", ns, "-o", "json")
		p.AwaitJSON(t, await, is("Synced", ""))

		res := c.Relist(t, ctx, testenv.RelistChanges{Namespace: ns, Delete: "gone", Update: "changed", Create: "fresh"})
		changed, fresh := res.Updated, res.Created

		relist := p.AwaitJSON(t, 3*await, is("Relist", ""))
		for field, want := range map[string]int{"added": 1, "updated": 1, "deleted": 1, "unchanged": 1} {
			if got := num(relist[field]); got != want {
				t.Errorf("Relist %s = %d, want %d (%v)", field, got, want, relist)
			}
		}
		if relist["reason"] == "" || relist["fromResourceVersion"] == "" {
			t.Errorf("Relist without reason or fromResourceVersion: %v", relist)
		}
		// Before the relist the plugin said why: the watch closed (the server died), then the
		// re-watch from the old resourceVersion was refused as expired (410).
		var closed, expired bool
		for _, m := range p.JSON() {
			if m["type"] == "Relist" {
				break
			}
			closed = closed || m["type"] == "WatchClosed"
			if m["type"] == "Error" && m["reason"] == "Expired" && contains(fmt.Sprint(m["message"]), "too old resource version") {
				expired = true
			}
		}
		if !closed || !expired {
			t.Errorf("before the Relist: WatchClosed %v, Error (Expired: too old resource version) %v; want both", closed, expired)
		}
		if !contains(fmt.Sprint(relist["reason"]), "too old resource version") {
			t.Errorf("Relist reason %q does not say the resourceVersion expired", relist["reason"])
		}
		want := map[string]func(map[string]any){
			"gone": func(m map[string]any) {
				wantField(t, m, "type", "Deleted")
				wantField(t, m, "tombstone", true)
			},
			"changed": func(m map[string]any) {
				wantField(t, m, "type", "Updated")
				wantField(t, m, "delta", "Replaced")
				wantField(t, m, "resourceVersion", changed.ResourceVersion)
				wantField(t, m, "oldResourceVersion", pre["changed"].ResourceVersion)
			},
			"same": func(m map[string]any) {
				wantField(t, m, "type", "Updated")
				wantField(t, m, "delta", "Replaced")
				wantField(t, m, "resourceVersion", pre["same"].ResourceVersion)
				wantField(t, m, "oldResourceVersion", pre["same"].ResourceVersion)
			},
			"fresh": func(m map[string]any) {
				wantField(t, m, "type", "Added")
				wantField(t, m, "delta", "Replaced")
				wantField(t, m, "initialList", false)
				wantField(t, m, "resourceVersion", fresh.ResourceVersion)
			},
		}
		for len(want) > 0 {
			m := p.AwaitJSON(t, await, func(m map[string]any) bool { _, ok := want[fmt.Sprint(m["name"])]; return ok })
			name := m["name"].(string)
			want[name](m)
			delete(want, name)
		}
	})
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
