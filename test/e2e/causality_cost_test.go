package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// peakRSS is a process's peak resident set in KiB (VmHWM), as the kernel counts it.
func peakRSS(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// A measurement for docs/performance.md, not a test: what `watch deploy -A --owned` costs on a
// cluster with many pods, none of them in the watched tree (the pods informer lists every pod of
// the scope and keeps them cached). Run with KUBECTL_INFORMER_MEASURE=1 (and
// KUBECTL_INFORMER_E2E_NORACE=1 for figures without the race detector).
func TestMeasureOwnedPodsCost(t *testing.T) {
	if os.Getenv("KUBECTL_INFORMER_MEASURE") == "" {
		t.Skip("a measurement: set KUBECTL_INFORMER_MEASURE=1")
	}
	const pods = 3000
	ctx := context.Background()
	ns, bulk := newNamespace(t, cluster), newNamespace(t, cluster)
	cs := cluster.Clientset
	// No controllers here: the tree is made by hand, a Deployment and a ReplicaSet it owns.
	d, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment(ns, "web", 1), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: ns, Labels: d.Spec.Template.Labels,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: d.UID, Controller: &yes}}},
		Spec: appsv1.ReplicaSetSpec{Selector: d.Spec.Selector, Template: d.Spec.Template}}
	if _, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, pods)
	sem := make(chan struct{}, 16)
	for i := range pods {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bulk-%05d", i), Namespace: bulk, Labels: map[string]string{"app": "bulk", "tier": "batch"}},
				Spec: corev1.PodSpec{NodeName: "nowhere", Containers: []corev1.Container{{Name: "app", Image: "example.com/bulk:1",
					Env: []corev1.EnvVar{{Name: "MODE", Value: "batch"}}, Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}}}}
			if _, err := cs.CoreV1().Pods(bulk).Create(ctx, p, metav1.CreateOptions{}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	measure := func(resource string, args ...string) int {
		p := cluster.RunPlugin(t, ctx, append([]string{"watch", resource, "-A", "-o", "json", "--no-summary"}, args...)...)
		if resource == "pods" {
			awaitSeen(t, p, await, "pods synced", func(m map[string]any) bool { return m["type"] == "Synced" && m["resource"] == "pods" })
		} else {
			awaitSeen(t, p, await, "web", func(m map[string]any) bool { return m["type"] == "Added" && m["name"] == "web" })
		}
		if len(args) > 0 {
			awaitSeen(t, p, await, "pods synced", func(m map[string]any) bool { return m["type"] == "Synced" && m["resource"] == "pods" })
			awaitSeen(t, p, await, "replicasets synced", func(m map[string]any) bool { return m["type"] == "Synced" && m["resource"] == "replicasets" })
		}
		kib := peakRSS(t, p.Pid())
		p.Stop(t)
		return kib
	}
	base := measure("deploy")
	plain := measure("pods")
	owned := measure("deploy", "--owned")
	meta := measure("deploy", "--owned", "--metadata-only")
	pod, err := cs.CoreV1().Pods(bulk).Get(ctx, "bulk-00000", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	per := func(kib int) float64 { return float64(kib-base) / pods }
	t.Logf("%d pods of %d bytes of JSON each, cluster-wide, none in the tree. Peak RSS: watch deploy -A %d KiB; watch pods -A %d KiB (+%.1f KiB/pod); "+
		"watch deploy -A --owned %d KiB (+%.1f KiB/pod); --owned --metadata-only %d KiB (+%.1f KiB/pod); race detector: %v",
		pods, len(b), base, plain, per(plain), owned, per(owned), meta, per(meta), os.Getenv("KUBECTL_INFORMER_E2E_NORACE") == "")
}
