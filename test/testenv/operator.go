package testenv

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/kubectl-informer/kubectl-informer/internal/controlplane"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Operator names used by StartOperator.
const (
	// OperatorName is the operator's binary, user, ClusterRole and field manager.
	OperatorName = "widget-operator"
	// OperatorBugAnnotation on a Widget switches a bug on: "status-loop" or "fight".
	OperatorBugAnnotation = "example.com/bug"
	// OperatorRetiredAnnotation set to "true" on a Widget makes the operator delete its
	// Deployment (a controller's delete).
	OperatorRetiredAnnotation = "example.com/retired"
	// OperatorWidgetLabel is on the pod template of each Widget's Deployment (so on its
	// ReplicaSets and pods too); its value is the Widget's name.
	OperatorWidgetLabel = "example.com/widget"
)

// OperatorOptions configures StartOperator.
type OperatorOptions struct {
	// Namespace limits the operator's cache to one namespace (default: all).
	Namespace string
	// InsecureMetrics serves /metrics over plain HTTP without authentication (default: HTTPS
	// with controller-runtime's authentication/authorization filter, as kubebuilder v4 does).
	InsecureMetrics bool
	// Workers is MaxConcurrentReconciles (default 1).
	Workers int
	// MissingRBAC leaves "update widgets/status" out of the operator's ClusterRole: every
	// reconcile that writes status fails with Forbidden (the missing-permission bug).
	MissingRBAC bool
	// Fixed runs the operator's fixed build (--bugs=false): it ignores OperatorBugAnnotation.
	Fixed bool
	// Args are extra flags of the operator, e.g. controller-runtime's logging flags
	// ("--zap-log-level=5", "--zap-devel=false" for JSON lines).
	Args []string
	// LogFile, if set, also receives the operator's whole output (appended), as `make run >
	// mgr.log 2>&1` writes a local controller's log.
	LogFile string
	// CRILogFile, if set, also receives the operator's whole output as a kubelet keeps a
	// container's log (CRI format: `TIME stdout F LINE`), for kwok to serve as a pod's log
	// (ServeNamespaceLogs).
	CRILogFile string
}

// Operator is a running hack/widget-operator.
type Operator struct {
	*Component
	// MetricsURL is its /metrics (https unless InsecureMetrics).
	MetricsURL string
	// KubeconfigPath is the operator's own identity (user widget-operator, bound to the
	// ClusterRole widget-operator).
	KubeconfigPath string
}

// hackBinary is a program of hack/ (the test controllers), built once per process into the
// directory of the plugin build, removed by RemoveBuiltPlugin.
type hackBinary struct {
	name string // the binary, and ./hack/<name>
	once sync.Once
	bin  string
	err  error
}

func (h *hackBinary) build(ctx context.Context) (string, error) {
	h.once.Do(func() {
		dir, err := BuildPluginOnce(ctx)
		if err != nil {
			h.err = err
			return
		}
		root, err := ModuleRoot()
		if err != nil {
			h.err = err
			return
		}
		bin := filepath.Join(dir, h.name)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./hack/"+h.name)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			h.err = fmt.Errorf("go build ./hack/%s: %w\n%s", h.name, err, out)
			return
		}
		h.bin = bin
	})
	return h.bin, h.err
}

var operatorBuild = &hackBinary{name: OperatorName}

var demoBuild = &hackBinary{name: "demo"}

// BuildDemoOnce builds ./hack/demo once per process (beside the plugin build, removed by
// RemoveBuiltPlugin) and returns the binary.
func BuildDemoOnce(ctx context.Context) (string, error) { return demoBuild.build(ctx) }

// BuildOperatorOnce builds ./hack/widget-operator once per process (into the directory of the
// plugin build, removed by RemoveBuiltPlugin) and returns the binary.
func BuildOperatorOnce(ctx context.Context) (string, error) { return operatorBuild.build(ctx) }

// userKubeconfig adds a user called name to the cluster and writes its kubeconfig into the
// cluster's directory.
func (c *Cluster) userKubeconfig(name string) (string, error) {
	user, err := c.Env.AddUser(envtest.User{Name: name}, nil)
	if err != nil {
		return "", fmt.Errorf("add user %s: %w", name, err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(c.Dir, name+".kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// StartOperator installs the Widget CRD (if needed) and the operator's RBAC, and starts
// hack/widget-operator against this cluster as user widget-operator. It returns once its
// metrics endpoint answers. Cluster.Stop stops it; so does Operator.Stop.
func (c *Cluster) StartOperator(ctx context.Context, opts OperatorOptions) (*Operator, error) {
	bin, err := BuildOperatorOnce(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.InstallCRD(ctx, WidgetCRD()); err != nil {
		return nil, err
	}
	if err := c.applyOperatorRBAC(ctx, opts.MissingRBAC); err != nil {
		return nil, err
	}
	kcPath, err := c.userKubeconfig(OperatorName)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	workers := opts.Workers
	if workers < 1 {
		workers = 1
	}
	args := []string{
		"--kubeconfig=" + kcPath,
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(port),
		"--metrics-secure=" + strconv.FormatBool(!opts.InsecureMetrics),
		"--workers=" + strconv.Itoa(workers),
	}
	if opts.Namespace != "" {
		args = append(args, "--namespace="+opts.Namespace)
	}
	if opts.Fixed {
		args = append(args, "--bugs=false")
	}
	args = append(args, opts.Args...)
	logs := []controlplane.LogFile{{Path: opts.LogFile}, {Path: opts.CRILogFile, Wrap: NewCRILogWriter}}
	p, err := c.StartComponent(OperatorName, bin, port, logs, args...)
	if err != nil {
		return nil, err
	}
	op := &Operator{Component: p, KubeconfigPath: kcPath, MetricsURL: p.URL("/metrics")}
	scheme := "https"
	if opts.InsecureMetrics {
		scheme = "http"
		op.MetricsURL = "http" + op.MetricsURL[len("https"):]
	}
	// Up once /metrics answers at all (401/403 without a token when secure).
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback readiness only
	defer client.CloseIdleConnections()
	if err := waitFor(ctx, c.opts.StartTimeout, func(ctx context.Context) (bool, error) {
		if exited, err := p.Exited(); exited {
			return false, fmt.Errorf("%s exited: %v", OperatorName, err)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, op.MetricsURL, nil)
		resp, err := client.Do(req)
		if err != nil {
			return false, nil //nolint:nilerr // not listening yet
		}
		resp.Body.Close()
		return true, nil
	}); err != nil {
		_ = p.Stop()
		return nil, fmt.Errorf("%s metrics (%s) not serving: %w%s", OperatorName, scheme, err, tailOf(p))
	}
	return op, nil
}

// applyOperatorRBAC creates (or replaces the rules of) ClusterRole widget-operator and binds
// it to user widget-operator. The rules are what a kubebuilder v4 project generates for this
// controller, plus its metrics filter's TokenReviews and SubjectAccessReviews.
func (c *Cluster) applyOperatorRBAC(ctx context.Context, missing bool) error {
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{"example.com"}, Resources: []string{"widgets"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{APIGroups: []string{"apps"}, Resources: []string{"replicasets"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
	}
	if !missing {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"example.com"}, Resources: []string{"widgets/status"}, Verbs: []string{"get", "update", "patch"}})
	}
	return c.ApplyRBAC(ctx, OperatorName, rules)
}
