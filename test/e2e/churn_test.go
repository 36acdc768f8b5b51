package e2e

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// The storm: thousands of updates, some deletes and creates, written through a second API server
// while the plugin's own is killed and restarted. Nothing is lost: the state rebuilt from the
// plugin's stream (the initial list, then adds, updates, deletes, tombstones, relist deliveries)
// ends equal to the server's, resourceVersions included.
func TestChurnAcrossRestart(t *testing.T) {
	streamingModesParallel(t, func(t *testing.T, streaming bool, env []string) {
		ctx := context.Background()
		c := testenv.StartT(t, testenv.Options{})
		c.PluginDir = cluster.PluginDir
		ns := newNamespace(t, c)
		const objects, updates, deletes = 100, 2000, 30
		var names []string
		for i := range objects {
			names = append(names, fmt.Sprintf("cm-%03d", i))
		}
		createConfigMaps(t, c.Clientset, ns, names...)
		before, err := c.Clientset.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		initial := map[string]string{}
		for _, cm := range before.Items {
			initial[cm.Name] = cm.ResourceVersion
		}
		p := c.RunPluginWith(t, ctx, env, "watch", "cm", "-n", ns, "-o", "json", "--no-summary")
		// The state starts from the initial list, as a controller's cache does: it must be the
		// server's, resourceVersions included, before anything else happens.
		state := map[string]string{}
		synced := p.AwaitJSON(t, await, func(m map[string]any) bool {
			if m["type"] == "Added" {
				if m["initialList"] != true {
					t.Errorf("an Added line before Synced is not from the initial list: %v", m)
				}
				state[m["name"].(string)] = m["resourceVersion"].(string)
			}
			return m["type"] == "Synced"
		})
		if !maps.Equal(state, initial) || synced["items"] != float64(objects) {
			t.Fatalf("the initial list gave %d objects (Synced says %v), want the server's %d:\n%v\nwant %v", len(state), synced["items"], len(initial), state, initial)
		}

		second, err := c.StartSecondAPIServer(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cms := second.Clientset.CoreV1().ConfigMaps(ns)
		rng := rand.New(rand.NewPCG(1, 2))
		alive := append([]string{}, names...)
		created := 0
		for i := range updates {
			switch i {
			case updates / 4:
				if err := c.KillAPIServer(); err != nil {
					t.Fatal(err)
				}
			case 3 * updates / 4:
				if err := c.RestartAPIServer(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if i%(updates/deletes) == 0 && len(alive) > 1 {
				// Replace one object: a delete and a create.
				k := rng.IntN(len(alive))
				if err := cms.Delete(ctx, alive[k], metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				created++
				alive[k] = fmt.Sprintf("new-%03d", created)
				createConfigMaps(t, second.Clientset, ns, alive[k])
				continue
			}
			name := alive[rng.IntN(len(alive))]
			patch := fmt.Sprintf(`{"data":{"v":"%d"}}`, i)
			if _, err := cms.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		list, err := cms.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{}
		for _, cm := range list.Items {
			want[cm.Name] = cm.ResourceVersion
		}

		var lines int
		p.AwaitJSON(t, 4*await, func(m map[string]any) bool {
			lines++
			name, _ := m["name"].(string)
			switch m["type"] {
			case "Added", "Updated":
				state[name] = m["resourceVersion"].(string)
			case "Deleted":
				delete(state, name)
			}
			return maps.Equal(state, want)
		})
		var relists, tombstones int
		for _, m := range p.JSON() {
			if m["type"] == "Relist" {
				relists++
			}
			if m["tombstone"] == true {
				tombstones++
			}
		}
		t.Logf("streaming=%v: %d lines until the stream's state equalled the server's %d objects; %d relists, %d tombstones",
			streaming, lines, len(want), relists, tombstones)
		if relists == 0 {
			t.Error("no Relist: the restart did not force one, so the test proved less than it says")
		}
	})
}
