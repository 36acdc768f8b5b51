// Command demo starts a throw-away cluster with a real control plane (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and two kwok nodes, all on 127.0.0.1; see
// test/testenv) and the project's widget-operator, plays a short story in namespace "demo" and
// runs "kubectl informer watch <resources> -n demo" on it until Ctrl-C:
//
//   - a Deployment rolled out (kubectl set image) and scaled: ReplicaSets and pods made by
//     kube-controller-manager, bound by kube-scheduler, Running on kwok nodes;
//
//   - a Widget reconciled by widget-operator into a Deployment of its own;
//
//   - then the operator's fight bug switched on for a while (it forces the Widget's ReplicaSet
//     against the deployment controller), then its self-triggering status loop: the plugin's
//     HotLoop lines name them.
//
//     go run ./hack/demo                         # watch deployments, replicasets, pods, widgets
//     go run ./hack/demo -resource rs,pods       # other resources
//     go run ./hack/demo -generator-only         # just the cluster and the story
//     go run ./hack/demo -- -o json              # arguments after -- go to the plugin
//     go run ./hack/demo -cluster-only           # just the cluster: a target for kubectl informer reenact
//     go run ./hack/demo -operator-log op.log    # the operator's log too, for --controller-logs op.log
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

const ns = "demo"

func main() {
	resource := flag.String("resource", "deployments,replicasets,pods,widgets", "resources for kubectl informer watch")
	plugin := flag.String("plugin", "", "kubectl-informer binary (default: build ./cmd/kubectl-informer)")
	genOnly := flag.Bool("generator-only", false, "run only the cluster and the story")
	verbose := flag.Bool("v", false, "say every step of the story (always on with -generator-only)")
	flag.BoolVar(&auditLog, "audit", false, "turn the API server's audit log on (test/testenv's AuditPolicy) and pass it to the plugin as --audit-log: every line names who made it")
	operatorLog := flag.String("operator-log", "", "also write widget-operator's log (JSON lines at --zap-log-level=5) to this file, for kubectl informer watch --controller-logs")
	clusterOnly := flag.Bool("cluster-only", false, "start only the control plane, print its kubeconfig and context (a target for kubectl informer reenact --context), and wait for Ctrl-C")
	flag.Parse()
	if *clusterOnly {
		if err := runCluster(); err != nil {
			fmt.Fprintln(os.Stderr, "demo:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*resource, *plugin, *operatorLog, *genOnly, *verbose || *genOnly, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(resource, plugin, operatorLog string, genOnly, verbose bool, pluginArgs []string) error {
	// Ctrl-C reaches the plugin (same process group) and us; the control plane runs in
	// process groups of its own, so it keeps running until we stop it below.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dieWithParent()

	var pluginDir string
	if !genOnly {
		dir, err := os.MkdirTemp("", "kubectl-informer-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if err := preparePlugin(ctx, plugin, dir); err != nil {
			return err
		}
		pluginDir = dir
	}

	started := time.Now()
	c, stopCluster, err := startCluster(ctx)
	if err != nil {
		return err
	}
	defer stopCluster()
	// Run first: a second signal while the cluster stops ends the demo at once.
	defer stop()
	c.PluginDir = pluginDir
	if _, err := c.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "demo: building and starting widget-operator...")
	// Plain-HTTP metrics until the plugin scrapes HTTPS with a token; the operator's default is
	// kubebuilder v4's (HTTPS, authenticated).
	opts := testenv.OperatorOptions{Namespace: ns, InsecureMetrics: true}
	if operatorLog != "" {
		opts.LogFile, opts.Args = operatorLog, []string{"--zap-log-level=5", "--zap-devel=false", "--zap-time-encoding=rfc3339nano"}
	}
	op, err := c.StartOperator(ctx, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "demo: control plane ready in %s; in another terminal:\n\n"+
		"    export KUBECONFIG=%s\n"+
		"    kubectl get deploy,rs,pods,widgets -n %s\n"+
		"    kubectl informer watch rs,pods -n %s\n"+
		"    kubectl informer watch widgets -n %s --metrics-url %s\n\n",
		time.Since(started).Round(time.Second), c.KubeconfigPath, ns, ns, ns, op.MetricsURL)

	s := &story{c: c, verbose: verbose}
	// The Deployment exists before the watch starts, so its initial list has something in it.
	if _, err := c.Kubectl(ctx, "create", "deployment", "web", "-n", ns, "--image=example.com/web:1", "--replicas=2"); err != nil {
		return err
	}
	go s.run(ctx)

	if genOnly {
		<-ctx.Done()
		return nil
	}
	args := append([]string{"informer", "watch", resource, "-n", ns, "--kubeconfig", c.KubeconfigPath}, pluginArgs...)
	if c.AuditLogPath != "" {
		args = append(args, "--audit-log", c.AuditLogPath)
	}
	cmd := exec.CommandContext(ctx, "kubectl", args...)
	cmd.Env = c.Environ()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second // then it is killed
	err = cmd.Run()
	if ctx.Err() != nil {
		return nil // Ctrl-C
	}
	return fmt.Errorf("kubectl informer exited: %v", err)
}

// runCluster starts the control plane, says how to reach it, and stops it on Ctrl-C or SIGTERM
// (to the demo, or to the `go run` that started it).
func runCluster() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dieWithParent()
	c, stopCluster, err := startCluster(ctx)
	if err != nil {
		return err
	}
	defer stopCluster()
	// Run first: a second signal while the cluster stops ends the demo at once.
	defer stop()
	cfg, err := clientcmd.LoadFromFile(c.KubeconfigPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "demo: control plane ready; Ctrl-C stops it. In another terminal:\n\n"+
		"    kubectl informer reenact RECORDING --kubeconfig %s --context %s --skip-manager YOUR-CONTROLLER\n\n"+
		"and run your controller with --kubeconfig %s\n", c.KubeconfigPath, cfg.CurrentContext, c.KubeconfigPath)
	<-ctx.Done()
	return nil
}

// auditLog is -audit: the API server writes an audit log, and the plugin reads it.
var auditLog bool

// startCluster starts the control plane; the function it returns stops it. The cluster's
// watchdog (test/testenv) kills what is left when the demo exits before that returns: a
// second signal, unhandled by then, ends the demo at once.
func startCluster(ctx context.Context) (*testenv.Cluster, func(), error) {
	fmt.Fprintln(os.Stderr, "demo: starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok (2 nodes)...")
	opts := testenv.RealControlPlane(2)
	opts.Audit = auditLog
	c, err := testenv.Start(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	if c.AuditLogPath != "" {
		fmt.Fprintln(os.Stderr, "demo: the API server's audit log:", c.AuditLogPath)
	}
	return c, func() {
		fmt.Fprintln(os.Stderr, "demo: stopping the cluster (Ctrl-C again to kill it at once)")
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "demo: stop:", err)
		}
	}, nil
}

// preparePlugin puts a kubectl-informer into dir: a link to the given binary, or a fresh build.
func preparePlugin(ctx context.Context, plugin, dir string) error {
	if plugin == "" {
		fmt.Fprintln(os.Stderr, "demo: building ./cmd/kubectl-informer...")
		_, err := testenv.BuildPluginTo(ctx, dir)
		return err
	}
	abs, err := filepath.Abs(plugin)
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return err
	}
	return os.Symlink(abs, filepath.Join(dir, testenv.PluginName))
}

// story plays the demo's steps at fixed times, then keeps rolling the Deployment out and
// scaling it every 20 s so there is always something to see.
type story struct {
	c       *testenv.Cluster
	verbose bool
}

type step struct {
	at   time.Duration
	say  string
	kube []string // a kubectl command, or
	do   func(ctx context.Context) error
}

func (s *story) run(ctx context.Context) {
	start := time.Now()
	steps := []step{
		{at: 8 * time.Second, say: "rollout: kubectl set image deployment/web web=example.com/web:2",
			kube: []string{"set", "image", "deployment/web", "web=example.com/web:2"}},
		{at: 25 * time.Second, say: "scale: kubectl scale deployment/web --replicas=4",
			kube: []string{"scale", "deployment/web", "--replicas=4"}},
		{at: 35 * time.Second, say: "widget: a Widget shop (size 2), reconciled by widget-operator into a Deployment",
			do: func(ctx context.Context) error { return s.createWidget(ctx, "shop", 2) }},
		{at: 50 * time.Second, say: "widget: size 3",
			kube: []string{"patch", "widget/shop", "--type=merge", "-p", `{"spec":{"size":3}}`}},
		{at: 60 * time.Second, say: "bug: widget-operator fights the deployment controller over the ReplicaSet of shop",
			kube: []string{"annotate", "widget/shop", testenv.OperatorBugAnnotation + "=fight"}},
		{at: 80 * time.Second, say: "bug: widget-operator rewrites the status of shop on every reconcile (a self-triggering loop)",
			kube: []string{"annotate", "--overwrite", "widget/shop", testenv.OperatorBugAnnotation + "=status-loop"}},
		{at: 95 * time.Second, say: "fixed: the bug annotation removed",
			kube: []string{"annotate", "widget/shop", testenv.OperatorBugAnnotation + "-"}},
	}
	for _, st := range steps {
		if !sleepUntil(ctx, start.Add(st.at)) {
			return
		}
		s.exec(ctx, st)
	}
	for i := 3; ; i++ {
		if !sleepUntil(ctx, time.Now().Add(20*time.Second)) {
			return
		}
		if i%2 == 1 {
			s.exec(ctx, step{say: fmt.Sprintf("rollout: web=example.com/web:%d", i),
				kube: []string{"set", "image", "deployment/web", fmt.Sprintf("web=example.com/web:%d", i)}})
		} else {
			s.exec(ctx, step{say: fmt.Sprintf("scale: web to %d", 2+i%3),
				kube: []string{"scale", "deployment/web", fmt.Sprintf("--replicas=%d", 2+i%3)}})
		}
	}
}

func (s *story) exec(ctx context.Context, st step) {
	if s.verbose {
		fmt.Fprintf(os.Stderr, "demo: %s\n", st.say)
	}
	var err error
	if st.kube != nil {
		_, err = s.c.Kubectl(ctx, append(st.kube, "-n", ns)...)
	} else {
		err = st.do(ctx)
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
	}
}

func (s *story) createWidget(ctx context.Context, name string, size int64) error {
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"size": size, "color": "blue"},
	}}
	_, err := s.c.Dynamic.Resource(testenv.WidgetGVR).Namespace(ns).Create(ctx, w, metav1.CreateOptions{})
	return err
}

// sleepUntil waits until t or ctx ends; it reports whether ctx is still live.
func sleepUntil(ctx context.Context, t time.Time) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Until(t)):
		return true
	}
}
