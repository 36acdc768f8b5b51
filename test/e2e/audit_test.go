package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/internal/audit"
	"github.com/kubectl-informer/kubectl-informer/internal/controlplane"
	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// gcUser is who kube-controller-manager's garbage collector acts as on the test control plane:
// it runs with the admin's kubeconfig, without --use-service-account-credentials, so only its
// user agent (".../generic-garbage-collector") tells it from the test's own admin requests.
const gcUser = "admin"

// TestAuditNamesEveryWriter: with --audit-log, every object line of -o json that a write made
// names the identity that made it (ConfigMaps at RequestResponse level, matched by the
// response's resourceVersion; Secrets at Metadata level, matched by time), every Deleted line
// names its deleter, and the garbage collector's cascading delete names the garbage collector.
func TestAuditNamesEveryWriter(t *testing.T) {
	t.Parallel() // a control plane of its own (docs/testcluster.md, "Parallel tests")
	c := testenv.StartT(t, testenv.Options{Audit: true, Controllers: true})
	c.PluginDir = cluster.PluginDir
	ns := newNamespace(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := c.GrantEdit(ctx, ns, rbacv1.UserKind, "alice"); err != nil {
		t.Fatal(err)
	}
	sa, err := c.ServiceAccountClient(ctx, ns, "writer", "audit-e2e-writer/1.0")
	if err != nil {
		t.Fatal(err)
	}
	saUser := "system:serviceaccount:" + ns + ":writer"

	p := c.RunPlugin(t, ctx, "watch", "configmaps,secrets", "-n", ns, "-o", "json", "--audit-log", c.AuditLogPath)
	for range 2 {
		p.AwaitJSON(t, time.Minute, func(m map[string]any) bool { return m["type"] == "Synced" })
	}
	// want is the script's ground truth: who made each line, by resource, name and line type.
	want := map[string]string{}
	as := func(user string, args ...string) {
		t.Helper()
		if user != "" {
			args = append(args, "--as="+user)
		}
		if _, err := c.Kubectl(ctx, append(args, "-n", ns)...); err != nil {
			t.Fatal(err)
		}
	}
	// alice, by impersonation: a ConfigMap and a Secret created, changed, deleted.
	as("alice", "create", "configmap", "a1", "--from-literal=k=v")
	as("alice", "label", "configmap", "a1", "step=2")
	as("alice", "delete", "configmap", "a1")
	as("alice", "create", "secret", "generic", "s1", "--from-literal=password=hunter2")
	as("alice", "label", "secret", "s1", "step=2")
	as("alice", "delete", "secret", "s1")
	for _, k := range []string{"configmaps/a1", "secrets/s1"} {
		for _, typ := range []string{"Added", "Updated", "Deleted"} {
			want[k+" "+typ] = "alice"
		}
	}
	// The service account, through client-go: create, update, delete.
	cms := sa.CoreV1().ConfigMaps(ns)
	b1, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b1"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b1.Data["k"] = "w"
	if _, err := cms.Update(ctx, b1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "b1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"Added", "Updated", "Deleted"} {
		want["configmaps/b1 "+typ] = saUser
	}
	// The admin creates an owner and its dependent, and deletes the owner: the garbage collector
	// deletes the dependent.
	admin := c.Clientset.CoreV1().ConfigMaps(ns)
	owner, err := admin.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = admin.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dependent",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.UID}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	background := metav1.DeletePropagationBackground
	if err := admin.Delete(ctx, "owner", metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		t.Fatal(err)
	}
	want["configmaps/owner Added"], want["configmaps/owner Deleted"] = "admin", "admin"
	want["configmaps/dependent Added"], want["configmaps/dependent Deleted"] = "admin", gcUser

	p.AwaitJSON(t, 2*time.Minute, func(m map[string]any) bool { return m["type"] == "Deleted" && m["name"] == "dependent" })
	got := auditedLines(t, p, want)
	checkMadeBy(t, want, got)
	for key, a := range got {
		switch {
		case strings.HasPrefix(key, "configmaps/") && !strings.HasSuffix(key, "Deleted") && a["matched"] != "resourceVersion":
			t.Errorf("%s at RequestResponse level matched by %v, want resourceVersion", key, a["matched"])
		case strings.HasPrefix(key, "secrets/") && !strings.HasSuffix(key, "Deleted") && a["matched"] != "time":
			t.Errorf("%s at Metadata level matched by %v, want time", key, a["matched"])
		case strings.HasSuffix(key, "Deleted") && a["verb"] != "delete":
			t.Errorf("%s: verb %v, want delete", key, a["verb"])
		}
	}
	if a := got["configmaps/a1 Added"]; a != nil && a["user"] != "admin" {
		t.Errorf("alice's create: user %v, want the impersonating admin", a["user"])
	}
	if a := got["configmaps/b1 Added"]; a != nil && (a["serviceAccount"] != ns+"/writer" || a["userAgent"] != "audit-e2e-writer/1.0") {
		t.Errorf("the service account's create: %v", a)
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
}

// auditedLines is the audit of each object line a write made in p's -o json output, by
// "resource/name Type", for the keys of want; a line a write made without audit is an error.
func auditedLines(t *testing.T, p *testenv.PluginRun, want map[string]string) map[string]map[string]any {
	t.Helper()
	got := map[string]map[string]any{}
	for _, b := range p.All() {
		var m map[string]any
		if json.Unmarshal(b, &m) != nil || m["initialList"] == true {
			continue
		}
		typ, _ := m["type"].(string)
		if typ != "Added" && typ != "Updated" && typ != "Deleted" {
			continue
		}
		key := fmt.Sprintf("%s/%s %s", m["resource"], m["name"], typ)
		a, _ := m["audit"].(map[string]any)
		if a == nil {
			t.Errorf("%s: no audit: %s", key, b)
			continue
		}
		if _, ok := want[key]; ok {
			got[key] = a
		}
	}
	return got
}

// madeBy is who made a line by its audit: the impersonated user, else the user.
func madeBy(a map[string]any) string {
	if by, _ := a["impersonatedUser"].(string); by != "" {
		return by
	}
	by, _ := a["user"].(string)
	return by
}

// checkMadeBy checks every line of the script's ground truth (want: who made each line) is
// there and named by the audit log as made by its maker; it logs how many were.
func checkMadeBy(t *testing.T, want map[string]string, got map[string]map[string]any) {
	t.Helper()
	right := 0
	for key, user := range want {
		a := got[key]
		switch {
		case a == nil:
			t.Errorf("%s: no line", key)
		case madeBy(a) != user:
			t.Errorf("%s: made by %q by the audit log, want %q: %v", key, madeBy(a), user, a)
		default:
			right++
		}
	}
	t.Logf("%d of the script's %d lines named their maker", right, len(want))
}

// TestTopAuditRanksThePoller: top --audit-log ranks a client polling GET every 10ms first and
// a client relisting every second (the ConfigMaps, Secrets and ServiceAccounts of every
// namespace, as an informer of each would) second, above every controller of
// kube-controller-manager (its deployment and replicaset controllers busy with a Deployment), with requests/s within 10% of their requests counted in the audit
// log by this test over the ranking's window; the relister's LISTs are among the costliest.
func TestTopAuditRanksThePoller(t *testing.T) {
	c := testenv.StartT(t, testenv.Options{Audit: true, Controllers: true})
	c.PluginDir = cluster.PluginDir
	ns := newNamespace(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := c.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "polled"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const pollerUA, relisterUA = "audit-e2e-poller/1.0", "audit-e2e-relister/1.0"
	poller, relister := c.ClientsetAs(pollerUA), c.ClientsetAs(relisterUA)
	clients, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan struct{}, 2)
	var sent []time.Time // when each of the poller's GETs was sent, by its own clock
	every := func(d time.Duration, do func()) {
		defer func() { done <- struct{}{} }()
		tick := time.NewTicker(d)
		defer tick.Stop()
		for clients.Err() == nil {
			do()
			select {
			case <-tick.C:
			case <-clients.Done():
			}
		}
	}
	go every(10*time.Millisecond, func() {
		at := time.Now()
		if _, err := poller.CoreV1().ConfigMaps(ns).Get(clients, "polled", metav1.GetOptions{}); err == nil {
			sent = append(sent, at)
		}
	})
	go every(time.Second, func() {
		_, _ = relister.CoreV1().ConfigMaps("").List(clients, metav1.ListOptions{})
		_, _ = relister.CoreV1().Secrets("").List(clients, metav1.ListOptions{})
		_, _ = relister.CoreV1().ServiceAccounts("").List(clients, metav1.ListOptions{})
	})
	started := time.Now()
	const window = 10 * time.Second
	p := c.RunPlugin(t, ctx, "top", "configmaps", "-o", "json", "--audit-log", c.AuditLogPath, "--window", window.String(), "--interval", "1s", "--limit", "0")
	after := func(d time.Duration) func(map[string]any) bool {
		return func(m map[string]any) bool {
			at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(m["auditTime"]))
			return m["type"] == "TopClient" && err == nil && at.After(started.Add(d))
		}
	}
	// Halfway through the first window, a Deployment of five pods keeps kube-controller-manager's
	// deployment and replicaset controllers busy for a while.
	p.AwaitJSON(t, 2*time.Minute, after(window/2))
	if _, err := c.Clientset.AppsV1().Deployments(ns).Create(ctx, deployment(ns, "busy", 5), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A ranking whose whole window is the clients', with the replicaset controller in it.
	rsc := p.AwaitJSON(t, 2*time.Minute, func(m map[string]any) bool {
		return after(window+2*time.Second)(m) && strings.HasSuffix(fmt.Sprint(m["userAgent"]), "/replicaset-controller")
	})
	var first map[string]any
	for _, m := range p.JSON() {
		if m["type"] == "TopClient" && m["auditTime"] == rsc["auditTime"] && m["rank"] == 1.0 {
			first = m
		}
	}
	if first == nil {
		t.Fatalf("no client ranked first at %v", rsc["auditTime"])
	}
	heavy := p.AwaitJSON(t, time.Minute, func(m map[string]any) bool { return m["type"] == "TopHeavyList" && m["userAgent"] == relisterUA })
	stop()
	<-done
	<-done
	if heavy["allNamespaces"] != true || heavy["resourceVersion"] != false {
		t.Errorf("the relister's LIST: %v", heavy)
	}
	ranking := map[string]map[string]any{} // that ranking's clients by user agent
	controllers, topController := 0, math.Inf(1)
	for _, m := range p.JSON() {
		if m["type"] == "TopClient" && m["auditTime"] == first["auditTime"] {
			ranking[fmt.Sprint(m["userAgent"])] = m
		}
	}
	for ua, m := range ranking {
		if strings.HasPrefix(ua, "kube-controller-manager/") {
			controllers++
			topController = min(topController, m["rank"].(float64))
			t.Logf("rank %v %.2f/s %s", m["rank"], m["rate"], ua)
		}
	}
	if controllers == 0 {
		t.Errorf("no kube-controller-manager controller in the ranking: %v", ranking)
	}
	for _, ua := range []string{pollerUA, relisterUA} {
		m := ranking[ua]
		if m == nil || m["rank"].(float64) >= topController || m["user"] != "admin" || (ua == pollerUA && m["rank"] != 1.0) {
			t.Fatalf("%s ranked %v, want above every controller of kube-controller-manager (the first at %v), the poller first: %v", ua, m, topController, ranking)
		}
		secs := m["windowSeconds"].(float64)
		counted := countAudit(t, c.AuditLogPath, ua, windowStart(m), atTime(m))
		want, got := float64(counted)/secs, m["rate"].(float64)
		t.Logf("%s: %.2f requests/s ranked, %.2f/s counted in the audit log (%d in %.0fs)", ua, got, want, counted, secs)
		if want == 0 || got < want*0.9 || got > want*1.1 {
			t.Errorf("%s's rate %.2f/s, want within 10%% of %.2f/s", ua, got, want)
		}
	}
	// And by the poller's own count of what it sent then (the goroutine has ended: done).
	own, from, to := 0, windowStart(first), atTime(first)
	for _, at := range sent {
		if at.After(from) && !at.After(to) {
			own++
		}
	}
	mine, got := float64(own)/first["windowSeconds"].(float64), first["rate"].(float64)
	t.Logf("poller: %.1f requests/s by its own count", mine)
	if got < mine*0.9 || got > mine*1.1 {
		t.Errorf("poller's rate %.1f/s, want within 10%% of the %.1f/s it sent itself", got, mine)
	}
	_ = p.Signal(syscall.SIGINT)
	_, _ = p.Wait()
}

// atTime is a TopClient line's auditTime; windowStart the start of the span it counts.
func atTime(m map[string]any) time.Time {
	at, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(m["auditTime"]))
	return at
}

func windowStart(m map[string]any) time.Time {
	return atTime(m).Add(-time.Duration(m["windowSeconds"].(float64) * float64(time.Second)))
}

// countAudit counts the completed requests of userAgent in the audit log received in (from, to].
func countAudit(t *testing.T, path, userAgent string, from, to time.Time) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		var e struct {
			Stage     string    `json:"stage"`
			UserAgent string    `json:"userAgent"`
			Received  time.Time `json:"requestReceivedTimestamp"`
		}
		if json.Unmarshal(line, &e) != nil || e.UserAgent != userAgent || e.Stage != "ResponseComplete" {
			continue
		}
		if e.Received.After(from) && !e.Received.After(to) {
			n++
		}
	}
	return n
}

// TestAuditLogHostile: a FIFO and /dev/zero as --audit-log end the run with one line; a 100 MB
// line is skipped with one stderr line and the line after it still names the writer; a user
// name made to hurt a terminal is escaped in human output.
func TestAuditLogHostile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{fifo, "/dev/zero"} {
		r := runPlugin(t, cluster, "watch", "configmaps", "--audit-log", bad)
		if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "--audit-log "+bad+" is not a regular file") {
			t.Errorf("--audit-log %s: exit %d, stderr %q", bad, r.code, r.stderr)
		}
	}
	ns := newNamespace(t, cluster)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	log := filepath.Join(dir, "audit.log")
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	huge := bytes.Repeat([]byte("x"), 100<<20)
	if _, err := f.Write(append(huge, '\n')); err != nil {
		t.Fatal(err)
	}
	p := cluster.RunPlugin(t, ctx, "watch", "configmaps", "-n", ns, "--audit-log", log, "--audit-wait", "1m")
	lines := p.Lines()
	awaitLine := func(what string, pred func(string) bool) string {
		t.Helper()
		for {
			select {
			case b, ok := <-lines:
				if !ok {
					t.Fatalf("the plugin exited before %s\n%s", what, p.Stderr())
				}
				if pred(string(b)) {
					return string(b)
				}
			case <-ctx.Done():
				t.Fatalf("no %s\n%s", what, p.Stderr())
			}
		}
	}
	awaitLine("Synced line", func(s string) bool { return strings.Contains(s, "Synced") })
	cm, err := cluster.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hostile"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crafted := fmt.Sprintf(`{"auditID":"crafted","stage":"ResponseComplete","verb":"create","user":{"username":"evil\u001b]0;TITLE\u0007\u001b[2J"},"userAgent":"ua\r","objectRef":{"resource":"configmaps","namespace":%q,"name":"hostile"},"responseStatus":{"code":201},"responseObject":{"metadata":{"resourceVersion":%q}},"stageTimestamp":%q}`+"\n",
		ns, cm.ResourceVersion, time.Now().UTC().Format(time.RFC3339Nano))
	if _, err := f.WriteString(crafted); err != nil {
		t.Fatal(err)
	}
	got := awaitLine("the created object's line", func(s string) bool { return strings.Contains(s, "hostile") })
	if !strings.Contains(got, `by evil^[]0;TITLE\x07^[[2J`) || strings.ContainsAny(got, "\x1b\x07\r") {
		t.Errorf("the writer is not named, or not escaped: %q", got)
	}
	if err := p.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_, _ = p.Wait()
	if n := strings.Count(p.Stderr(), "longer than 1024 KiB"); n != 1 {
		t.Errorf("%d stderr lines about the 100 MB line, want 1:\n%s", n, p.Stderr())
	}
}

// TestAuditWebhookSameLines: the API server's audit webhook received directly
// (--audit-webhook-listen, the kubeconfig it makes given to kube-apiserver) names the same
// requests on the same lines as its audit log file (--audit-log).
func TestAuditWebhookSameLines(t *testing.T) {
	t.Parallel() // a control plane of its own (docs/testcluster.md, "Parallel tests")
	dir := t.TempDir()
	port, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	listen := fmt.Sprintf("127.0.0.1:%d", port)
	kubeconfig, err := audit.WebhookFiles(dir, listen)
	if err != nil {
		t.Fatal(err)
	}
	// Batches of at most a second (the webhook's default waits up to 30s to fill one), and a
	// short backoff: the API server's stop sends its last batch to a plugin stopped already.
	c := testenv.StartT(t, testenv.Options{Audit: true, APIServerFlags: map[string]string{
		"audit-webhook-config-file": kubeconfig, "audit-webhook-batch-max-wait": "1s", "audit-webhook-initial-backoff": "50ms"}})
	c.PluginDir = cluster.PluginDir
	ns := newNamespace(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := c.GrantEdit(ctx, ns, rbacv1.UserKind, "alice"); err != nil {
		t.Fatal(err)
	}
	fromFile := c.RunPlugin(t, ctx, "watch", "configmaps,secrets", "-n", ns, "-o", "json", "--audit-log", c.AuditLogPath, "--audit-wait", "10s")
	fromHook := c.RunPlugin(t, ctx, "watch", "configmaps,secrets", "-n", ns, "-o", "json", "--audit-webhook-listen", listen, "--audit-webhook-dir", dir, "--audit-wait", "10s")
	for _, p := range []*testenv.PluginRun{fromFile, fromHook} {
		for range 2 {
			p.AwaitJSON(t, time.Minute, func(m map[string]any) bool { return m["type"] == "Synced" })
		}
	}
	for _, args := range [][]string{
		{"create", "configmap", "w1", "--from-literal=k=v", "--as=alice"},
		{"label", "configmap", "w1", "step=2"},
		{"delete", "configmap", "w1", "--as=alice"},
		{"create", "secret", "generic", "w2", "--from-literal=k=v", "--as=alice"},
		{"delete", "secret", "w2"},
	} {
		if _, err := c.Kubectl(ctx, append(args, "-n", ns)...); err != nil {
			t.Fatal(err)
		}
	}
	lines := func(p *testenv.PluginRun) map[string]string {
		p.AwaitJSON(t, 2*time.Minute, func(m map[string]any) bool { return m["type"] == "Deleted" && m["name"] == "w2" })
		out := map[string]string{}
		for _, b := range p.All() {
			var m map[string]any
			if json.Unmarshal(b, &m) != nil || m["initialList"] == true || (m["name"] != "w1" && m["name"] != "w2") {
				continue
			}
			a, _ := json.Marshal(m["audit"])
			out[fmt.Sprintf("%s/%s %s", m["resource"], m["name"], m["type"])] = string(a)
		}
		return out
	}
	file, hook := lines(fromFile), lines(fromHook)
	if len(file) != 5 {
		t.Errorf("%d lines from the file's run, want 5: %v", len(file), file)
	}
	for k, v := range file {
		if v == "null" {
			t.Errorf("%s: no audit from the file", k)
		}
		if hook[k] != v {
			t.Errorf("%s:\n file    %s\n webhook %s", k, v, hook[k])
		}
	}
	for _, p := range []*testenv.PluginRun{fromFile, fromHook} {
		_ = p.Signal(syscall.SIGINT)
		if code, _ := p.Wait(); code != 0 {
			t.Errorf("exit %d\n%s", code, p.Stderr())
		}
	}
	if !strings.Contains(fromHook.Stderr(), "receiving the API server's audit webhook on https://"+listen+"/audit") {
		t.Errorf("the webhook run does not say where it listens:\n%s", fromHook.Stderr())
	}
}
