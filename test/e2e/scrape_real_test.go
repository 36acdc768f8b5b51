package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// The tests in this file scrape the metrics of the controllers people run, as they serve them:
// kube-controller-manager (HTTPS on its secure port, delegated authentication and authorization,
// workqueues labelled by name only) and a kubebuilder v4 style controller-runtime manager
// (HTTPS, controller-runtime's authentication/authorization filter, reconcile metrics).

// jwtPattern matches a JSON Web Token (every service account token is one): no output may hold one.
var jwtPattern = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.`)

const metricsReaderRole = "e2e-metrics-reader"

// newServiceAccount creates a service account in ns.
func newServiceAccount(t *testing.T, c *testenv.Cluster, ns, name string) {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.Clientset.CoreV1().ServiceAccounts(ns).Create(context.Background(), sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// grantMetrics binds ns/name to a ClusterRole allowed to get /metrics, the RBAC a metrics server
// with delegated authorization asks about (what the error lines tell users to create).
func grantMetrics(t *testing.T, c *testenv.Cluster, ns, name string) {
	t.Helper()
	ctx := context.Background()
	rbac := c.Clientset.RbacV1()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: metricsReaderRole},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: metricsReaderRole + "-" + ns + "-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsReaderRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
	})
}

// kcmCAFile is kube-controller-manager's self-signed serving certificate bundle, usable as the
// CA file that verifies it.
func kcmCAFile(t *testing.T, c *testenv.Cluster) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(c.Dir, testenv.ControllerManager, "*.crt"))
	if len(files) != 1 {
		t.Fatalf("kube-controller-manager certificates: %v, want one", files)
	}
	return files[0]
}

// stopAndCheckNoToken ends the run and fails if a token shows up on stdout, stderr or in the
// recording: the exact tokens given, or anything shaped like a JWT.
func stopAndCheckNoToken(t *testing.T, p *testenv.PluginRun, recording string, tokens ...string) (stderr string) {
	t.Helper()
	p.StopWith(t, syscall.SIGTERM)
	rec, err := os.ReadFile(recording)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string][]byte{"stdout": bytes.Join(p.All(), []byte("\n")), "stderr": []byte(p.Stderr()), "recording": rec}
	for where, b := range outputs {
		for _, tok := range tokens {
			if bytes.Contains(b, []byte(tok)) {
				t.Errorf("the token is in %s", where)
			}
		}
		if loc := jwtPattern.FindIndex(b); loc != nil {
			t.Errorf("a JWT is in %s: %.40s...", where, b[loc[0]:])
		}
	}
	return p.Stderr()
}

func isScrapeError(m map[string]any) bool { return m["type"] == "Error" && m["verb"] == "scrape" }

// kube-controller-manager's deployment queue over HTTPS, verified with --metrics-ca-file, as a
// service account whose token is in a file: its adds move when a Deployment is created, with a
// rate; no token anywhere, at -v=9.
func TestRealScrapeControllerManagerTokenFile(t *testing.T) {
	c := realControlPlane(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	newServiceAccount(t, c, ns, "reader")
	grantMetrics(t, c, ns, "reader")
	secs := int64(600)
	tr, err := c.Clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "reader",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tokenFile, rec := filepath.Join(dir, "token"), filepath.Join(dir, "rec.ndjson")
	if err := os.WriteFile(tokenFile, []byte(tr.Status.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	url := c.Component(testenv.ControllerManager).URL("/metrics")
	p := c.RunPlugin(t, ctx, "watch", "deployments", "-n", ns, "-o", "json", "-v=9", "--record", rec,
		"--metrics-url", url, "--metrics-ca-file", kcmCAFile(t, c), "--metrics-token-file", tokenFile, "--metrics-interval", "300ms")
	deployment := func(m map[string]any) bool {
		return m["type"] == "ControllerQueue" && m["name"] == "deployment"
	}
	first := awaitSeen(t, p, await, "kube-controller-manager's deployment queue", deployment)
	if _, ok := first["controller"]; ok {
		t.Errorf("kube-controller-manager's queues have no controller label: %v", first)
	}
	if _, ok := first["reconciles"]; ok {
		t.Errorf("kube-controller-manager has no controller-runtime reconcile metrics: %v", first)
	}
	adds0, _ := first["adds"].(float64)
	if _, err := c.Kubectl(ctx, "create", "deployment", "web", "-n", ns, "--image=example.com/web:1"); err != nil {
		t.Fatal(err)
	}
	moved := awaitSeen(t, p, await, "the deployment queue's adds moving, with a rate", func(m map[string]any) bool {
		adds, _ := m["adds"].(float64)
		rate, _ := m["addsPerSecond"].(float64)
		return deployment(m) && adds > adds0 && rate > 0
	})
	t.Logf("deployment queue: adds %v -> %v (%v/s)", adds0, moved["adds"], moved["addsPerSecond"])
	if n := p.Count(isScrapeError); n != 0 {
		t.Errorf("%d scrape errors; stderr: %s", n, p.Stderr())
	}
	stderr := stopAndCheckNoToken(t, p, rec, tr.Status.Token)
	if !strings.Contains(stderr, "0 scrape errors") || !strings.Contains(stderr, "metrics: ") {
		t.Errorf("summary lacks the metrics line: %s", stderr[max(0, len(stderr)-600):])
	}
}

// --metrics-serviceaccount: without RBAC, a SubjectAccessReview says so before the first scrape,
// in one Forbidden line naming the service account and the fix, and the 403s that follow add no
// line (one of another kind, a timeout, may come between); once the binding exists, the scrape
// recovers and kube-controller-manager's queues come.
// The minted token is never shown, not even at -v=10.
func TestRealScrapeServiceAccountForbiddenThenAllowed(t *testing.T) {
	c := realControlPlane(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	newServiceAccount(t, c, ns, "scraper")
	rec := filepath.Join(t.TempDir(), "rec.ndjson")
	url := c.Component(testenv.ControllerManager).URL("/metrics")
	p := c.RunPlugin(t, ctx, "watch", "deployments", "-n", ns, "-o", "json", "-v=10", "--record", rec,
		"--metrics-url", url, "--metrics-serviceaccount", ns+"/scraper", "--metrics-insecure-skip-tls-verify", "--metrics-interval", "300ms")
	e := awaitSeen(t, p, await, "a scrape error", isScrapeError)
	wantField(t, e, "reason", "Forbidden")
	msg, _ := e["message"].(string)
	for _, want := range []string{
		"service account " + ns + "/scraper may not get /metrics",
		"SubjectAccessReview",
		"kubectl create clusterrole metrics-reader --verb=get --non-resource-url=/metrics",
		"kubectl create clusterrolebinding metrics-reader-" + ns + "-scraper --clusterrole=metrics-reader --serviceaccount=" + ns + ":scraper",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error message lacks %q: %s", want, msg)
		}
	}
	// Several 403 scrapes later (counted in the -v=10 log of each request, not guessed from a
	// sleep), still one line for the streak.
	p.AwaitStderr(t, await, "three scrapes answered 403", func(stderr string) bool {
		// client-go's request log at -v=6 and above: "Response" verb="GET" url="..." status="403 Forbidden".
		return strings.Count(stderr, `url="`+url+`" status="403 Forbidden"`) >= 3
	})
	// A scrape that fails otherwise in between (its timeout is the 300 ms interval, which
	// kube-controller-manager's answer can exceed on a loaded machine) is news, and so is the 403
	// after it: the streak's lines never say one kind twice in a row.
	var reasons, messages []string
	for _, m := range p.JSON() {
		if isScrapeError(m) {
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			reasons, messages = append(reasons, r), append(messages, msg)
		}
	}
	for i := 1; i < len(reasons); i++ {
		if reasons[i] == reasons[i-1] {
			t.Errorf("two %s scrape error lines in a row while forbidden (the 403s must add no line): %q", reasons[i], messages)
		}
	}
	if n := p.Count(is("ControllerQueue", "")); n != 0 {
		t.Errorf("%d ControllerQueue lines while forbidden", n)
	}

	grantMetrics(t, c, ns, "scraper")
	// kube-controller-manager caches denials for 1s here (--authorization-webhook-cache-unauthorized-ttl, realControlPlane).
	r := awaitSeen(t, p, await, "the scrape recovered", func(m map[string]any) bool {
		return m["type"] == "Recovered" && m["verb"] == "scrape"
	})
	t.Logf("recovered: %v", r["message"])
	q := awaitSeen(t, p, await, "the deployment queue", is("ControllerQueue", "deployment"))
	wantField(t, q, "insecure", true)
	stderr := stopAndCheckNoToken(t, p, rec)
	if !strings.Contains(stderr, "Warning: --metrics-insecure-skip-tls-verify") {
		t.Error("no warning about --metrics-insecure-skip-tls-verify on stderr")
	}
	// One Error line per failure streak: the forbidden one, and any a loaded machine adds after
	// the recovery (a scrape timing out); the summary counts what the lines said, apart from the
	// informer's errors.
	n := p.Count(isScrapeError)
	if n < 1 || !strings.Contains(stderr, fmt.Sprintf(" %d scrape errors", n)) || !strings.Contains(stderr, "0 errors,") {
		t.Errorf("summary does not count the %d scrape error lines apart from the informer's: %s", n, stderr[max(0, len(stderr)-600):])
	}
}

// A kubebuilder v4 style manager (HTTPS, authentication/authorization filter) whose reconciles
// all fail (its ClusterRole lacks widgets/status): the ControllerQueue line has controller-
// runtime's reconcile counts by result, the errors, the workers, reconcile time, and rates.
func TestRealScrapeOperatorReconcileErrors(t *testing.T) {
	c := realControlPlane(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	op, err := c.StartOperator(ctx, testenv.OperatorOptions{Namespace: ns, MissingRBAC: true, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Stop() })
	if !strings.HasPrefix(op.MetricsURL, "https://") {
		t.Fatalf("operator metrics %s, want https", op.MetricsURL)
	}
	newServiceAccount(t, c, ns, "scraper")
	grantMetrics(t, c, ns, "scraper")
	rec := filepath.Join(t.TempDir(), "rec.ndjson")
	p := c.RunPlugin(t, ctx, "watch", "widgets", "-n", ns, "-o", "json", "--record", rec,
		"--metrics-url", op.MetricsURL, "--metrics-serviceaccount", ns+"/scraper", "--metrics-insecure-skip-tls-verify", "--metrics-interval", "300ms")
	p.AwaitJSON(t, await, is("Synced", ""))
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "w1"})
	failing := func(m map[string]any) bool {
		r, _ := m["reconciles"].(map[string]any)
		errs, _ := r["error"].(float64)
		total, _ := m["reconcileErrors"].(float64)
		return m["type"] == "ControllerQueue" && m["controller"] == "widget" && errs >= 2 && total >= 2
	}
	q := awaitSeen(t, p, await, "the widget queue with failed reconciles", failing)
	r := q["reconciles"].(map[string]any)
	for _, k := range []string{"success", "error", "requeue", "requeue_after"} {
		if _, ok := r[k].(float64); !ok {
			t.Errorf("reconciles.%s missing: %v", k, r)
		}
	}
	wantField(t, q, "name", "widget")
	wantField(t, q, "maxConcurrentReconciles", float64(2))
	if _, ok := q["activeWorkers"].(float64); !ok {
		t.Errorf("no activeWorkers: %v", q)
	}
	if _, ok := q["reconcileP99Seconds"].(float64); !ok {
		t.Errorf("no reconcile time quantile: %v", q)
	}
	rated := awaitSeen(t, p, await, "a widget line with reconcile rates", func(m map[string]any) bool {
		_, ok := m["reconcilesPerSecond"].(float64)
		return failing(m) && ok
	})
	t.Logf("widget queue: reconciles %v, %v/s, errors %v", rated["reconciles"], rated["reconcilesPerSecond"], rated["reconcileErrors"])
	if n := p.Count(isScrapeError); n != 0 {
		t.Errorf("%d scrape errors: %s", n, fmt.Sprint(p.Stderr()))
	}
	stopAndCheckNoToken(t, p, rec)
}

// operatorPod starts the widget-operator on this machine and a deployment named deploy in ns whose
// pod (on a kwok node) forwards podPort to the operator's metrics port; it returns the running
// pod's name.
func operatorPod(t *testing.T, c *testenv.Cluster, ns string, opts testenv.OperatorOptions, podPort int, deploy string) (string, *testenv.Operator) {
	t.Helper()
	ctx := context.Background()
	op, err := c.StartOperator(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Stop() })
	if err := c.ForwardNamespacePort(ctx, ns, podPort, op.Port); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Kubectl(ctx, "create", "deployment", deploy, "-n", ns, "--image=example.com/manager:1", fmt.Sprintf("--port=%d", podPort)); err != nil {
		t.Fatal(err)
	}
	var pod string
	testenv.Eventually(t, await, "a running pod of deployment "+deploy, func() (bool, error) {
		pods, err := c.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + deploy})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				pod = p.Name
			}
		}
		return pod != "", nil
	})
	return pod, op
}

// --metrics-from deploy/NAME:PORT and NAMESPACE/pod/NAME:PORT/PATH: a port-forward through the API server, as
// kubectl port-forward opens one, to a pod on a kwok node, which kwok forwards to the widget-
// operator's HTTPS metrics on this machine; the lines name the forward and its pod.
func TestRealScrapeMetricsFrom(t *testing.T) {
	c := realControlPlane(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	const podPort, deploy = 8443, "widget-controller-manager"
	pod, _ := operatorPod(t, c, ns, testenv.OperatorOptions{Namespace: ns}, podPort, deploy)
	newServiceAccount(t, c, ns, "scraper")
	grantMetrics(t, c, ns, "scraper")
	rec := filepath.Join(t.TempDir(), "rec.ndjson")
	// The pod form names its namespace and the watch spans all namespaces (-A).
	// -v=10: client-go logs the tunnel's bytes (encrypted here, TLS to the operator).
	p := c.RunPlugin(t, ctx, "watch", "widgets", "-A", "-n", ns, "-o", "json", "-v=10", "--record", rec,
		"--metrics-from", "deploy/"+deploy+":8443", "--metrics-from", ns+"/pod/"+pod+":8443/metrics",
		"--metrics-serviceaccount", ns+"/scraper", "--metrics-insecure-skip-tls-verify", "--metrics-interval", "2s") // each scrape is bounded by the interval: -v=10 on a busy machine is slow
	p.AwaitJSON(t, await, is("Synced", ""))
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "w1"})
	for _, from := range []string{"deploy/" + deploy + ":8443", ns + "/pod/" + pod + ":8443/metrics"} {
		q := awaitSeen(t, p, await, "the widget queue through "+from, func(m map[string]any) bool {
			f, _ := m["from"].(string)
			r, _ := m["reconciles"].(map[string]any)
			ok, _ := r["success"].(float64)
			return m["type"] == "ControllerQueue" && m["name"] == "widget" && strings.HasPrefix(f, from+" (pod "+ns+"/"+pod+")") && ok >= 1
		})
		if u, _ := q["url"].(string); !strings.HasPrefix(u, "https://127.0.0.1:") || !strings.HasSuffix(u, "/metrics") {
			t.Errorf("url %q, want the forward's local https URL", u)
		}
	}
	if n := p.Count(isScrapeError); n != 0 {
		t.Errorf("%d scrape errors: %s", n, p.Stderr())
	}
	stopAndCheckNoToken(t, p, rec)
}
