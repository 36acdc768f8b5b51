package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// recordPods records `watch deployments,replicasets,pods` in ns while a Deployment's controller
// creates three pods and then, scaled to zero, deletes them: every pod create and delete is the
// controllers' (kube-controller-manager), the pods named by generateName and owned by the
// ReplicaSet. It returns the recording.
func recordPods(t *testing.T, c *testenv.Cluster, ns string) string {
	t.Helper()
	ctx := context.Background()
	rec := filepath.Join(t.TempDir(), "pods.ndjson")
	p := c.RunPlugin(t, ctx, "watch", "deployments,replicasets,pods", "-n", ns, "-o", "json", "--record", rec)
	p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Synced" && m["resource"] == "pods" })
	if _, err := c.Kubectl(ctx, "create", "deployment", "web", "-n", ns, "--image=example.com/web:1", "--replicas=3"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, await, "three pods created", func() (bool, error) {
		return p.Count(func(m map[string]any) bool { return m["type"] == "Added" && m["resource"] == "pods" }) == 3, nil
	})
	if _, err := c.Kubectl(ctx, "scale", "deployment", "web", "-n", ns, "--replicas=0"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, await, "three pods deleted", func() (bool, error) {
		return p.Count(func(m map[string]any) bool { return m["type"] == "Deleted" && m["resource"] == "pods" }) == 3, nil
	})
	p.Stop(t)
	return rec
}

var playedLine = regexp.MustCompile(`(?m)^reenact: played (\d+) initial objects, (\d+) creates, (\d+) updates, (\d+) deletes$`)

// A recording of a controller's pod creates, the scheduler's bindings and the pods' deletes,
// reenacted into a control plane of its own (no scheduler, no controllers): every recorded
// create and delete is played and counted, each binding through pods/binding, and the run
// exits 0.
func TestReenactPodCreatesDeletes(t *testing.T) {
	t.Parallel() // its own namespace of a shared cluster (docs/testcluster.md, "Parallel tests")
	c := realControlPlane(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	rec := recordPods(t, c, ns)
	creates, deletes := 0, 0
	for _, m := range testenv.ReadNDJSON(t, rec) {
		switch m["type"] {
		case "Added":
			creates++
		case "Deleted":
			deletes++
		}
	}
	target := ns + "-p"
	r := c.RunPlugin(t, ctx, "reenact", rec, "--control-plane", "--namespace-map", ns+"="+target, "--speed", "0", "--settle", "1s")
	code, err := r.Wait()
	stderr := r.Stderr()
	t.Logf("reenact of %d creates and %d deletes, exit %d (%v), stderr:\n%s", creates, deletes, code, err, stderr)
	if code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
	m := playedLine.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr does not say what was played")
	}
	if m[2] != strconv.Itoa(creates) || m[4] != strconv.Itoa(deletes) {
		t.Errorf("played %s creates and %s deletes, want the recording's %d and %d", m[2], m[4], creates, deletes)
	}
	if !regexp.MustCompile(`(?m)^reenact: [1-9]\d* of the updates bound a pod to its recorded node \(pods/binding\)$`).MatchString(stderr) {
		t.Errorf("no binding played")
	}
}

// Interrupted while it plays (SIGINT, SIGTERM), reenact --control-plane says what it played and
// left unplayed, prints its --compare table, stops every process of its control plane and
// removes its directory, and exits 0 as an interrupted watch does.
func TestReenactInterrupted(t *testing.T) {
	t.Parallel() // its own namespace of a shared cluster (docs/testcluster.md, "Parallel tests")
	c := realControlPlane(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	rec := recordPods(t, c, ns)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			// A hundredth of the recorded pace: still playing when the signal comes.
			r := c.RunPlugin(t, ctx, "reenact", rec, "--control-plane", "--namespace-map", ns+"="+ns+"-i",
				"--speed", "0.01", "--compare", rec)
			r.AwaitStderr(t, await, "the control plane's kubeconfig", kubeconfigLine.MatchString)
			kc := kubeconfigLine.FindStringSubmatch(r.Stderr())[1]
			server := serverOf(t, kc)
			r.AwaitStderr(t, await, "the reenactment playing", func(e string) bool { return strings.Contains(e, " writes\n") })
			if err := r.Signal(sig); err != nil {
				t.Fatal(err)
			}
			code, err := r.Wait()
			stderr := r.Stderr()
			t.Logf("reenact after %s: exit %d (%v), stderr:\n%s", sig, code, err, stderr)
			if code != 0 {
				t.Errorf("exit %d after %s, want 0", code, sig)
			}
			for _, want := range []string{"reenact: played ", "reenact: stopped before the last ", "compare: the original recording"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q", want)
				}
			}
			assertControlPlaneGone(t, stderr, kc, server)
		})
	}
}

// assertControlPlaneGone fails unless reenact said it stopped its control plane, every pid it
// named is gone, its directory (of kubeconfig kc) is removed and server no longer listens.
func assertControlPlaneGone(t *testing.T, stderr, kc, server string) {
	t.Helper()
	m := stoppingLine.FindStringSubmatch(stderr)
	if m == nil {
		t.Errorf("stderr does not say it stops the control plane")
	} else {
		for _, s := range strings.Fields(m[1]) {
			pid, _ := strconv.Atoi(s)
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("process %d after reenact ended: kill -0: %v, want ESRCH", pid, err)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	if _, err := os.Stat(filepath.Dir(filepath.Dir(kc))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the control plane's directory after reenact ended: %v, want it removed", err)
	}
	assertNotListening(t, server)
}

// The etcd of reenact --control-plane dies while it plays: reenact ends with one line naming
// it (no stack trace), having stopped the rest of its control plane and removed its directory.
func TestReenactControlPlaneEtcdDies(t *testing.T) {
	t.Parallel() // its own namespace of a shared cluster (docs/testcluster.md, "Parallel tests")
	c := realControlPlane(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	rec := recordPods(t, c, ns)
	r := c.RunPlugin(t, ctx, "reenact", rec, "--control-plane", "--namespace-map", ns+"="+ns+"-d",
		"--speed", "0.01", "--compare", rec)
	r.AwaitStderr(t, await, "the control plane's kubeconfig", kubeconfigLine.MatchString)
	kc := kubeconfigLine.FindStringSubmatch(r.Stderr())[1]
	server := serverOf(t, kc)
	r.AwaitStderr(t, await, "the reenactment playing", func(e string) bool { return strings.Contains(e, " writes\n") })
	m := regexp.MustCompile(`etcd pid (\d+)`).FindStringSubmatch(r.Stderr())
	if m == nil {
		t.Fatalf("no etcd pid in stderr:\n%s", r.Stderr())
	}
	etcd, _ := strconv.Atoi(m[1])
	if err := syscall.Kill(etcd, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Done():
	case <-time.After(await):
		_ = r.Signal(syscall.SIGKILL)
		t.Fatalf("reenact still running %s after its etcd died; stderr:\n%s", await, r.Stderr())
	}
	code, _ := r.Wait()
	stderr := r.Stderr()
	t.Logf("reenact after its etcd died: exit %d, stderr:\n%s", code, stderr)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !regexp.MustCompile(`(?m)^error: the control plane's etcd \(pid \d+\) exited[^\n]*\n?$`).MatchString(stderr) {
		t.Errorf("the last line does not say etcd exited")
	}
	if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, ".go:") {
		t.Errorf("a stack trace on stderr")
	}
	assertControlPlaneGone(t, stderr, kc, server)
}
