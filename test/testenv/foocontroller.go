package testenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-informer/kubectl-informer/internal/controlplane"
)

// Names used by StartFooController.
const (
	// FooControllerName is hack/foo-controller's binary, user, ClusterRole and field manager.
	FooControllerName = "foo-controller"
	// FooBugAnnotation on a Foo switches a bug on: "status-loop" (or "respect-scale", which
	// turns its fight over spec.replicas off).
	FooBugAnnotation = "samplecontroller.kubectl-informer.dev/bug"
)

// FooGVR is the resource of FooCRD.
var FooGVR = schema.GroupVersionResource{Group: "samplecontroller.kubectl-informer.dev", Version: "v1alpha1", Resource: "foos"}

// FooCRD returns a fresh namespaced CRD foos.samplecontroller.kubectl-informer.dev (kind Foo,
// version v1alpha1), sample-controller's: spec.deploymentName, spec.replicas,
// status.availableReplicas, with a status subresource.
func FooCRD() *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: FooGVR.Resource + "." + FooGVR.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: FooGVR.Group,
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "foos", Singular: "foo", Kind: "Foo", ListKind: "FooList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: FooGVR.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"deploymentName": {Type: "string"},
							"replicas":       {Type: "integer"},
						}},
						"status": {Type: "object", XPreserveUnknownFields: &preserve},
					},
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
}

// NewFoo is a Foo named name in namespace ns whose Deployment is deployment with replicas.
func NewFoo(ns, name, deployment string, replicas int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": FooGVR.GroupVersion().String(),
		"kind":       "Foo",
		"metadata":   map[string]any{"namespace": ns, "name": name},
		"spec":       map[string]any{"deploymentName": deployment, "replicas": replicas},
	}}
	return u
}

var fooBuild = &hackBinary{name: FooControllerName}

// BuildFooControllerOnce builds ./hack/foo-controller once per process (beside the plugin
// build) and returns the binary.
func BuildFooControllerOnce(ctx context.Context) (string, error) { return fooBuild.build(ctx) }

// FooControllerOptions configures StartFooController.
type FooControllerOptions struct {
	// Namespace limits the controller's informers to one namespace (default: all).
	Namespace string
	// Args are more flags (-v=4, --logging-format=json, --workers=1).
	Args []string
	// LogFile, if set, also receives the controller's whole output (appended), as a controller
	// run locally with its output redirected to a file writes it.
	LogFile string
	// LogWriter, if set, also receives the controller's whole output (a test's own log file,
	// rotated or truncated as logrotate does).
	LogWriter io.Writer
}

// FooController is a running hack/foo-controller.
type FooController struct {
	*Component
	// MetricsURL is its /metrics (plain HTTP on loopback): client-go's workqueue metrics of its
	// queue (name="foo") and foo_controller_syncs_total{namespace,name,result}.
	MetricsURL string
}

// StartFooController installs the Foo CRD and the controller's RBAC, and starts
// hack/foo-controller against this cluster as user foo-controller (its klog log in the
// Component's Log). It returns once its informers have synced. Cluster.Stop stops it.
func (c *Cluster) StartFooController(ctx context.Context, opts FooControllerOptions) (*FooController, error) {
	bin, err := BuildFooControllerOnce(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.InstallCRD(ctx, FooCRD()); err != nil {
		return nil, err
	}
	if err := c.ApplyRBAC(ctx, FooControllerName, []rbacv1.PolicyRule{
		{APIGroups: []string{FooGVR.Group}, Resources: []string{"foos"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{FooGVR.Group}, Resources: []string{"foos/status"}, Verbs: []string{"update"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch", "create", "update"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}); err != nil {
		return nil, err
	}
	kcPath, err := c.userKubeconfig(FooControllerName)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"--kubeconfig=" + kcPath, "--health-bind-address=127.0.0.1:" + strconv.Itoa(port)}, opts.Args...)
	if opts.Namespace != "" {
		args = append(args, "--namespace="+opts.Namespace)
	}
	logs := []controlplane.LogFile{{Path: opts.LogFile}}
	if w := opts.LogWriter; w != nil {
		// A writer of the test's own: the component's copy goes nowhere, the writer takes it.
		logs = append(logs, controlplane.LogFile{Path: os.DevNull, Wrap: func(io.Writer) io.Writer { return w }})
	}
	p, err := c.StartComponent(FooControllerName, bin, port, logs, args...)
	if err != nil {
		return nil, err
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	url := base + "/healthz"
	if err := waitFor(ctx, c.opts.StartTimeout, func(ctx context.Context) (bool, error) {
		if exited, err := p.Exited(); exited {
			return false, fmt.Errorf("%s exited: %v", FooControllerName, err)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil //nolint:nilerr // not listening yet
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	}); err != nil {
		_ = p.Stop()
		return nil, fmt.Errorf("%s not synced (%s): %w%s", FooControllerName, url, err, tailOf(p))
	}
	return &FooController{Component: p, MetricsURL: base + "/metrics"}, nil
}

// ApplyRBAC creates (or replaces the rules of) ClusterRole name and binds it to user name.
func (c *Cluster) ApplyRBAC(ctx context.Context, name string, rules []rbacv1.PolicyRule) error {
	rbac := c.Clientset.RbacV1()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		cur, err := rbac.ClusterRoles().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Rules = rules
		if _, err := rbac.ClusterRoles().Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update ClusterRole %s: %w", name, err)
		}
	} else if err != nil {
		return fmt.Errorf("create ClusterRole %s: %w", name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}},
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create ClusterRoleBinding %s: %w", name, err)
	}
	return nil
}
