// Command demo starts a throw-away cluster (etcd + kube-apiserver on 127.0.0.1, see
// test/testenv), keeps changing Deployments and Widgets in namespace "demo", and runs
// "kubectl informer watch <resource> -n demo" on it until Ctrl-C.
//
//	go run ./hack/demo                      # watch deployments
//	go run ./hack/demo -resource widgets    # watch the Widget CRD
//	go run ./hack/demo -generator-only      # just the cluster and the changes
//	go run ./hack/demo -- -o json           # arguments after -- go to the plugin
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

const ns = "demo"

func main() {
	resource := flag.String("resource", "deployments", "resource for kubectl informer watch")
	plugin := flag.String("plugin", "", "kubectl-informer binary (default: build ./cmd/kubectl-informer)")
	genOnly := flag.Bool("generator-only", false, "run only the cluster and the generator")
	verbose := flag.Bool("v", false, "log every generator action (always on with -generator-only)")
	flag.Parse()
	if err := run(*resource, *plugin, *genOnly, *verbose || *genOnly, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(resource, plugin string, genOnly, verbose bool, pluginArgs []string) error {
	// Ctrl-C reaches the plugin (same process group) and us; etcd and kube-apiserver run in
	// their own process groups, so they keep running until we stop them below.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

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

	fmt.Fprintln(os.Stderr, "demo: starting etcd and kube-apiserver...")
	c, err := testenv.Start(ctx, testenv.Options{CRDs: []*apiextensionsv1.CustomResourceDefinition{testenv.WidgetCRD()}})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(os.Stderr, "demo: stopping the cluster")
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "demo: stop:", err)
		}
	}()
	c.PluginDir = pluginDir
	if _, err := c.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "\ndemo: cluster ready; in another terminal:\n\n    export KUBECONFIG=%s\n    kubectl get deploy,wdg -n %s\n\n", c.KubeconfigPath, ns)

	g := &generator{c: c, verbose: verbose}
	// Two deployments before the watch starts, so its initial list has something in it.
	for range 2 {
		if err := g.deploymentStep(ctx); err != nil {
			return err
		}
	}
	go g.run(ctx)

	if genOnly {
		<-ctx.Done()
		return nil
	}
	args := append([]string{"informer", "watch", resource, "-n", ns, "--kubeconfig", c.KubeconfigPath}, pluginArgs...)
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

// generator makes a change every 1–3 s: creates, scales, relabels or deletes a Deployment
// (keeping 2–6), and now and then creates, patches or deletes a Widget (keeping up to 4).
type generator struct {
	c       *testenv.Cluster
	verbose bool
	deploys int // names web-1, web-2, ...
	widgets int // names widget-1, ...
}

func (g *generator) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second + rand.N(2*time.Second)):
		}
		err := g.deploymentStep(ctx)
		if err == nil && rand.IntN(3) == 0 {
			err = g.widgetStep(ctx)
		}
		if err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "generator:", err)
		}
	}
}

func (g *generator) logf(format string, args ...any) {
	if g.verbose {
		fmt.Fprintf(os.Stderr, "generator: "+format+"\n", args...)
	}
}

func (g *generator) deploymentStep(ctx context.Context) error {
	api := g.c.Clientset.AppsV1().Deployments(ns)
	list, err := api.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	n := len(list.Items)
	action := rand.IntN(4)
	switch {
	case n < 2:
		action = 0
	case n >= 6:
		action = 3
	}
	if action == 0 {
		g.deploys++
		name := "web-" + strconv.Itoa(g.deploys)
		g.logf("create deployment %s", name)
		_, err := api.Create(ctx, newDeployment(name), metav1.CreateOptions{})
		return err
	}
	name := list.Items[rand.IntN(n)].Name
	var patch string
	switch action {
	case 1:
		replicas := 1 + rand.IntN(5)
		g.logf("scale deployment %s to %d", name, replicas)
		patch = fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	case 2:
		tier := []string{"frontend", "backend", "cache"}[rand.IntN(3)]
		g.logf("relabel deployment %s tier=%s", name, tier)
		patch = fmt.Sprintf(`{"metadata":{"labels":{"tier":%q}}}`, tier)
	default:
		g.logf("delete deployment %s", name)
		return api.Delete(ctx, name, metav1.DeleteOptions{})
	}
	_, err = api.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

func (g *generator) widgetStep(ctx context.Context) error {
	api := g.c.Dynamic.Resource(testenv.WidgetGVR).Namespace(ns)
	list, err := api.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	n := len(list.Items)
	action := rand.IntN(3)
	switch {
	case n == 0:
		action = 0
	case n >= 4:
		action = 2
	}
	colors := []string{"red", "green", "blue", "yellow"}
	switch action {
	case 0:
		g.widgets++
		name := "widget-" + strconv.Itoa(g.widgets)
		g.logf("create widget %s", name)
		w := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": name},
			"spec":     map[string]any{"size": int64(1 + rand.IntN(10)), "color": colors[rand.IntN(len(colors))]},
		}}
		_, err := api.Create(ctx, w, metav1.CreateOptions{})
		return err
	case 1:
		name := list.Items[rand.IntN(n)].GetName()
		patch := fmt.Sprintf(`{"spec":{"size":%d,"color":%q}}`, 1+rand.IntN(10), colors[rand.IntN(len(colors))])
		g.logf("patch widget %s %s", name, patch)
		_, err := api.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	default:
		name := list.Items[rand.IntN(n)].GetName()
		g.logf("delete widget %s", name)
		return api.Delete(ctx, name, metav1.DeleteOptions{})
	}
}

func newDeployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(1 + rand.IntN(3))),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "main", Image: "busybox:1.36", Command: []string{"sleep", "infinity"},
				}}},
			},
		},
	}
}
