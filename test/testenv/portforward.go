package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// kwokCRDs are the kwok CRDs that make its kubelet API forward a pod's ports to an address of
// our choice and serve a pod's log from a file of ours, by object (PortForward, Logs: one pod;
// ClusterPortForward, ClusterLogs: pods by namespace).
var kwokCRDs = []string{"kwok.x-k8s.io_portforwards.yaml", "kwok.x-k8s.io_clusterportforwards.yaml",
	"kwok.x-k8s.io_logs.yaml", "kwok.x-k8s.io_clusterlogs.yaml"}

// ClusterPortForwardGVR is kwok's ClusterPortForward resource.
var ClusterPortForwardGVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "clusterportforwards"}

// installKwokCRDs reads kwok's port-forward and logs CRDs from its module in the module cache
// (the module hack/testcluster/kwok builds kwok from; never copied into this repository) and
// installs them.
func (c *Cluster) installKwokCRDs(ctx context.Context) error {
	root, err := ModuleRoot()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kwok")
	cmd.Dir = filepath.Join(root, "hack", "testcluster", "kwok")
	out, err := cmd.Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		return fmt.Errorf("sigs.k8s.io/kwok is not in the module cache (go list -m in hack/testcluster/kwok: %v)", err)
	}
	for _, name := range kwokCRDs {
		b, err := os.ReadFile(filepath.Join(dir, "kustomize", "crd", "bases", name))
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(b, crd); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := c.InstallCRD(ctx, crd); err != nil {
			return err
		}
	}
	return nil
}

// kwokCRDsReady says why kwok's port-forward and logs objects cannot work here (nil: they can).
func (c *Cluster) kwokCRDsReady() error {
	if c.Component(Kwok) == nil {
		return errors.New("testenv: no kwok in this cluster (Options.Nodes is 0)")
	}
	if c.kwokCRDErr != nil {
		return fmt.Errorf("testenv: kwok runs without its port-forward and logs CRDs: %w", c.kwokCRDErr)
	}
	return nil
}

// ForwardNamespacePort makes kwok forward port podPort of every pod in namespace (on kwok's
// nodes) to 127.0.0.1:target, so that a port-forward through the API server to such a pod
// (kubectl port-forward, or the plugin's --metrics-from) reaches a process on this machine.
// It needs a cluster with Nodes > 0 whose kwok serves port-forward CRDs.
func (c *Cluster) ForwardNamespacePort(ctx context.Context, namespace string, podPort, target int) error {
	if err := c.kwokCRDsReady(); err != nil {
		return err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "ClusterPortForward",
		"metadata": map[string]any{"name": fmt.Sprintf("%s-%d", namespace, podPort)},
		"spec": map[string]any{
			"selector": map[string]any{"matchNamespaces": []any{namespace}},
			"forwards": []any{map[string]any{
				"ports":  []any{int64(podPort)},
				"target": map[string]any{"port": int64(target), "address": "127.0.0.1"},
			}},
		},
	}}
	_, err := c.Dynamic.Resource(ClusterPortForwardGVR).Create(ctx, obj, metav1.CreateOptions{})
	return err
}
