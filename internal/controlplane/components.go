package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KwokNodeAnnotation marks the nodes kwok manages (the annotation kwok's own examples use).
const KwokNodeAnnotation = "kwok.x-k8s.io/node"

// StartComponents starts what the options ask for beyond the API server, and waits until each
// is working: kube-controller-manager and kube-scheduler healthy (and the service-account
// controller has made "default" in "default"), every kwok node Ready. kwokArgs are extra kwok
// flags.
func (cp *ControlPlane) StartComponents(ctx context.Context, kwokArgs ...string) error {
	o := cp.opts
	if !o.Controllers && !o.Scheduler && o.Nodes == 0 {
		return nil
	}
	if o.Controllers {
		if err := cp.startControllerManager(ctx); err != nil {
			return err
		}
	}
	if o.Scheduler {
		if _, err := cp.startServing(ctx, Scheduler, o.SchedulerArgs...); err != nil {
			return err
		}
	}
	if o.Nodes > 0 {
		return cp.startKwok(ctx, kwokArgs)
	}
	return nil
}

func (cp *ControlPlane) startControllerManager(ctx context.Context) error {
	caFile := filepath.Join(cp.Dir, "cluster-ca.crt")
	if err := os.WriteFile(caFile, cp.RESTConfig.CAData, 0o600); err != nil {
		return err
	}
	certDir := cp.Env.ControlPlane.APIServer.CertDir
	p, err := cp.startServing(ctx, ControllerManager, append([]string{
		// One identity for all controllers, so their writes carry the field manager
		// kube-controller-manager as in most clusters' audit of it.
		"--use-service-account-credentials=false",
		"--controllers=*",
		"--service-account-private-key-file=" + filepath.Join(certDir, "sa-signer.key"),
		"--root-ca-file=" + caFile,
		// Pods of a namespace being deleted, nodes that stop beating: act at once.
		"--concurrent-gc-syncs=5",
	}, cp.opts.ControllerManagerArgs...)...,
	)
	if err != nil {
		return err
	}
	// The controllers are running once the service-account controller has acted.
	if err := cp.WaitFor(ctx, func(ctx context.Context) (bool, error) {
		_, err := cp.Clientset.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		return fmt.Errorf("kube-controller-manager made no ServiceAccount default/default: %w%s", err, p.Tail())
	}
	return nil
}

func (cp *ControlPlane) startKwok(ctx context.Context, extra []string) error {
	port, err := FreePort()
	if err != nil {
		return err
	}
	assets := cp.opts.AssetsDir
	p, err := cp.StartComponent(Kwok, filepath.Join(assets, Kwok), port, nil, append([]string{
		"--kubeconfig=" + cp.KubeconfigPath,
		"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=fake",
		"--config=" + filepath.Join(assets, "kwok-stages.yaml"),
		// kwok serves the kubelet API (logs, exec, port-forward) for its nodes here.
		"--node-ip=127.0.0.1",
		"--node-port=" + strconv.Itoa(port),
		"--server-address=127.0.0.1:" + strconv.Itoa(port),
	}, extra...)...)
	if err != nil {
		return err
	}
	for i := range cp.opts.Nodes {
		if err := cp.AddNode(ctx, fmt.Sprintf("kwok-node-%d", i)); err != nil {
			return err
		}
	}
	if err := cp.WaitFor(ctx, func(ctx context.Context) (bool, error) {
		if exited, err := p.Exited(); exited {
			return false, fmt.Errorf("kwok exited: %v", err)
		}
		nodes, err := cp.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // retry
		}
		ready := 0
		for _, n := range nodes.Items {
			if nodeReady(&n) {
				ready++
			}
		}
		return ready >= cp.opts.Nodes, nil
	}); err != nil {
		return fmt.Errorf("kwok nodes not Ready: %w%s", err, p.Tail())
	}
	return nil
}

// startServing starts kube-controller-manager or kube-scheduler with what both take (the admin
// kubeconfig for the API and for delegated authentication and authorization, a secure port on
// 127.0.0.1, a cert dir, leader election as in a real cluster) plus extra, and waits until
// /healthz answers.
func (cp *ControlPlane) startServing(ctx context.Context, name string, extra ...string) (*Component, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(cp.Dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	kc := cp.KubeconfigPath
	args := append([]string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + dir,
		// Leader election as clusters run it: a Lease in kube-system renewed every 2s (the
		// heartbeats `watch leases -n kube-system` shows). A lease lost ends the process, so
		// the deadlines are long: a starved machine must not lose it.
		"--leader-elect=true",
		"--leader-elect-lease-duration=60s",
		"--leader-elect-renew-deadline=50s",
		"--leader-elect-retry-period=2s",
	}, extra...)
	p, err := cp.StartComponent(name, filepath.Join(cp.opts.AssetsDir, name), port, nil, args...)
	if err != nil {
		return nil, err
	}
	return p, cp.WaitHealthy(ctx, p)
}

// AddNode creates a Node that kwok manages (kwok must be running: Options.Nodes > 0), with
// room for 110 pods and no taints, so ordinary pods are scheduled to it. It does not wait for
// it to become Ready.
func (cp *ControlPlane) AddNode(ctx context.Context, name string) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{KwokNodeAnnotation: "fake"},
			Labels: map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
		},
		Status: corev1.NodeStatus{Allocatable: capacity, Capacity: capacity.DeepCopy()},
	}
	_, err := cp.Clientset.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create node %s: %w", name, err)
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}
