package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// TestAuditFiveIdentities: a story of five identities (two users by client certificate, two
// service accounts by TokenRequest tokens, a service account impersonating a third user) that
// create, update, patch, server-side apply and delete ConfigMaps and Secrets: every object line
// of watch -o json --audit-log names the identity that made it (user, serviceAccount,
// impersonatedUser as docs/json.md says), every Deleted line its deleter, and the garbage
// collector's cascading delete the garbage collector: 100% of the script's ground truth.
func TestAuditFiveIdentities(t *testing.T) {
	t.Parallel() // a control plane of its own (docs/testcluster.md, "Parallel tests")
	c := testenv.StartT(t, testenv.Options{Audit: true, Controllers: true})
	c.PluginDir = cluster.PluginDir
	ns := newNamespace(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	alice, err := c.UserClient(ctx, ns, "alice", "audit-e2e-alice/1.0")
	must(err)
	bob, err := c.UserClient(ctx, ns, "bob", "audit-e2e-bob/1.0")
	must(err)
	writer, err := c.ServiceAccountClient(ctx, ns, "writer", "audit-e2e-writer/1.0")
	must(err)
	applier, err := c.ServiceAccountClient(ctx, ns, "applier", "audit-e2e-applier/1.0")
	must(err)
	// The impersonation: the service account "impersonator" acting as carol.
	must(c.GrantEdit(ctx, ns, rbacv1.UserKind, "carol"))
	impCfg, err := c.ServiceAccountConfig(ctx, ns, "impersonator", "audit-e2e-impersonator/1.0")
	must(err)
	must(c.GrantImpersonate(ctx, ns, "impersonator", "carol"))
	impCfg.Impersonate = rest.ImpersonationConfig{UserName: "carol"}
	carol, err := kubernetes.NewForConfig(impCfg)
	must(err)
	sa := func(name string) string { return "system:serviceaccount:" + ns + ":" + name }

	recFile := filepath.Join(t.TempDir(), "run.ndjson")
	p := c.RunPlugin(t, ctx, "watch", "configmaps,secrets", "-n", ns, "-o", "json", "--audit-log", c.AuditLogPath, "--record", recFile)
	for range 2 {
		p.AwaitJSON(t, time.Minute, func(m map[string]any) bool { return m["type"] == "Synced" })
	}
	want := map[string]string{} // the script's ground truth: who made each line
	made := func(key, by string) { want[key] = by }
	fg := metav1.DeleteOptions{}
	apply := func(cs *kubernetes.Clientset, name, manager, v string) *corev1.ConfigMap {
		t.Helper()
		cm, err := cs.CoreV1().ConfigMaps(ns).Apply(ctx, corev1ac.ConfigMap(name, ns).WithData(map[string]string{"k": v}), metav1.ApplyOptions{FieldManager: manager, Force: true})
		must(err)
		return cm
	}

	// alice: create, merge patch, delete a ConfigMap; create, update, delete a Secret (Metadata level).
	ac := alice.CoreV1().ConfigMaps(ns)
	_, err = ac.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "alice-cm"}}, metav1.CreateOptions{})
	must(err)
	_, err = ac.Patch(ctx, "alice-cm", types.MergePatchType, []byte(`{"data":{"k":"patched"}}`), metav1.PatchOptions{})
	must(err)
	must(ac.Delete(ctx, "alice-cm", fg))
	as := alice.CoreV1().Secrets(ns)
	s, err := as.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "alice-secret"}, StringData: map[string]string{"password": "hunter2"}}, metav1.CreateOptions{})
	must(err)
	s.Labels = map[string]string{"step": "2"}
	_, err = as.Update(ctx, s, metav1.UpdateOptions{})
	must(err)
	must(as.Delete(ctx, "alice-secret", fg))
	for _, typ := range []string{"Added", "Updated", "Deleted"} {
		made("configmaps/alice-cm "+typ, "alice")
		made("secrets/alice-secret "+typ, "alice")
	}
	// bob: server-side apply that creates, one that changes, a delete.
	apply(bob, "bob-cm", "bob-tool", "1")
	apply(bob, "bob-cm", "bob-tool", "2")
	must(bob.CoreV1().ConfigMaps(ns).Delete(ctx, "bob-cm", fg))
	// The service account "writer": create, update, delete.
	wc := writer.CoreV1().ConfigMaps(ns)
	w, err := wc.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "writer-cm"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	must(err)
	w.Data["k"] = "w"
	_, err = wc.Update(ctx, w, metav1.UpdateOptions{})
	must(err)
	must(wc.Delete(ctx, "writer-cm", fg))
	// The service account "applier", with the same field manager as bob's: apply, JSON patch, delete.
	apply(applier, "applier-cm", "bob-tool", "1")
	_, err = applier.CoreV1().ConfigMaps(ns).Patch(ctx, "applier-cm", types.JSONPatchType, []byte(`[{"op":"replace","path":"/data/k","value":"2"}]`), metav1.PatchOptions{})
	must(err)
	must(applier.CoreV1().ConfigMaps(ns).Delete(ctx, "applier-cm", fg))
	for _, typ := range []string{"Added", "Updated", "Deleted"} {
		made("configmaps/bob-cm "+typ, "bob")
		made("configmaps/writer-cm "+typ, sa("writer"))
		made("configmaps/applier-cm "+typ, sa("applier"))
	}
	// carol (the impersonator): creates an owner and updates it; the applier applies its
	// dependent; carol deletes the owner, and the garbage collector the dependent.
	cc := carol.CoreV1().ConfigMaps(ns)
	owner, err := cc.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	must(err)
	owner.Data = map[string]string{"k": "v"}
	_, err = cc.Update(ctx, owner, metav1.UpdateOptions{})
	must(err)
	_, err = applier.CoreV1().ConfigMaps(ns).Apply(ctx, corev1ac.ConfigMap("dependent", ns).WithOwnerReferences(
		metav1ac.OwnerReference().WithAPIVersion("v1").WithKind("ConfigMap").WithName("owner").WithUID(owner.UID)),
		metav1.ApplyOptions{FieldManager: "applier"})
	must(err)
	background := metav1.DeletePropagationBackground
	must(cc.Delete(ctx, "owner", metav1.DeleteOptions{PropagationPolicy: &background}))
	for _, typ := range []string{"Added", "Updated", "Deleted"} {
		made("configmaps/owner "+typ, "carol")
	}
	made("configmaps/dependent Added", sa("applier"))
	made("configmaps/dependent Deleted", gcUser)

	for key := range want {
		res, name, _ := strings.Cut(key, "/")
		name, typ, _ := strings.Cut(name, " ")
		p.AwaitSeen(t, 2*time.Minute, key, func(m map[string]any) bool {
			return m["resource"] == res && m["name"] == name && m["type"] == typ && m["initialList"] != true
		})
	}
	got := auditedLines(t, p, want)
	checkMadeBy(t, want, got)
	for key, a := range got {
		if strings.HasSuffix(key, " Deleted") && a["verb"] != "delete" {
			t.Errorf("%s: verb %v, want delete", key, a["verb"])
		}
	}
	for key, wantA := range map[string]map[string]any{
		"configmaps/alice-cm Updated":   {"user": "alice", "verb": "patch", "userAgent": "audit-e2e-alice/1.0", "matched": "resourceVersion"},
		"secrets/alice-secret Updated":  {"user": "alice", "verb": "update", "matched": "time"},
		"configmaps/bob-cm Added":       {"user": "bob", "verb": "patch", "matched": "resourceVersion"},
		"configmaps/bob-cm Updated":     {"user": "bob", "verb": "patch", "matched": "resourceVersion"},
		"configmaps/applier-cm Added":   {"user": sa("applier"), "serviceAccount": ns + "/applier", "verb": "patch", "matched": "resourceVersion"},
		"configmaps/applier-cm Updated": {"user": sa("applier"), "serviceAccount": ns + "/applier", "verb": "patch", "matched": "resourceVersion"},
		"configmaps/writer-cm Updated":  {"user": sa("writer"), "serviceAccount": ns + "/writer", "verb": "update"},
		"configmaps/owner Added":        {"user": sa("impersonator"), "impersonatedUser": "carol", "serviceAccount": nil, "userAgent": "audit-e2e-impersonator/1.0"},
		"configmaps/owner Deleted":      {"user": sa("impersonator"), "impersonatedUser": "carol", "verb": "delete"},
	} {
		for k, v := range wantA {
			if a := got[key]; a != nil && a[k] != v {
				t.Errorf("%s: %s %v, want %v: %v", key, k, a[k], v, a)
			}
		}
	}
	if a := got["configmaps/dependent Deleted"]; a != nil && !strings.HasSuffix(fmt.Sprint(a["userAgent"]), "/generic-garbage-collector") {
		t.Errorf("the cascading delete's user agent %v does not name the garbage collector", a["userAgent"])
	}
	for _, b := range p.All() {
		if strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "aHVudGVyMg") {
			t.Fatalf("a Secret's value in the output: %s", b)
		}
	}
	if err := p.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code, _ := p.Wait(); code != 0 {
		t.Errorf("exit %d\n%s", code, p.Stderr())
	}
	replayJoinsTheAuditLog(t, c, recFile, got)
}

// replayJoinsTheAuditLog: the recording of the same story without its audit fields, replayed
// with --audit-log, names the same identity on each line as the live join did.
func replayJoinsTheAuditLog(t *testing.T, c *testenv.Cluster, recFile string, live map[string]map[string]any) {
	t.Helper()
	var stripped bytes.Buffer
	for _, m := range testenv.ReadNDJSON(t, recFile) {
		delete(m, "audit")
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		stripped.Write(append(b, '\n'))
	}
	bare := filepath.Join(t.TempDir(), "bare.ndjson")
	if err := os.WriteFile(bare, stripped.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runPlugin(t, c, "replay", bare, "--audit-log", c.AuditLogPath, "-o", "json")
	if r.code != 0 {
		t.Fatalf("replay --audit-log: exit %d\n%s", r.code, r.stderr)
	}
	replayed := map[string]map[string]any{}
	for _, l := range strings.Split(r.stdout, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil || m["initialList"] == true {
			continue
		}
		if a, _ := m["audit"].(map[string]any); a != nil {
			replayed[fmt.Sprintf("%s/%s %s", m["resource"], m["name"], m["type"])] = a
		}
	}
	same := 0
	for key, a := range live {
		b := replayed[key]
		if b == nil {
			t.Errorf("replay --audit-log: %s has no audit (live: %v)", key, a)
			continue
		}
		alike := true
		for _, f := range []string{"user", "impersonatedUser", "serviceAccount", "userAgent", "verb", "auditID"} {
			if fmt.Sprint(a[f]) != fmt.Sprint(b[f]) {
				t.Errorf("replay --audit-log: %s: %s %v, live %v", key, f, b[f], a[f])
				alike = false
			}
		}
		if alike {
			same++
		}
	}
	t.Logf("replay --audit-log named %d of the live run's %d audited lines alike", same, len(live))
	// The report of the same bare recording says who made each write in the objects' histories.
	page := filepath.Join(t.TempDir(), "page.html")
	if rr := runPlugin(t, c, "report", bare, "--audit-log", c.AuditLogPath, "-o", page); rr.code != 0 {
		t.Fatalf("report --audit-log: exit %d\n%s", rr.code, rr.stderr)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{"(alice)", "(bob)", "(carol)", fmt.Sprintf("(sa:%v)", live["configmaps/writer-cm Updated"]["serviceAccount"])} {
		if !strings.Contains(string(html), ">"+who+"</span>") {
			t.Errorf("report --audit-log: the page does not name %s", who)
		}
	}
}
