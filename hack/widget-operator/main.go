// Command widget-operator is the demo and test operator of kubectl-informer: a small
// controller-runtime manager over the Widget CRD (widgets.example.com, test/testenv.WidgetCRD)
// that keeps one Deployment per Widget (spec.size replicas) and reports it in the Widget's
// status. It is built for the tests and `make demo`, never shipped.
//
// Its metrics are served the way kubebuilder v4 scaffolds them: HTTPS with a self-signed
// certificate and controller-runtime's authentication/authorization filter (bearer tokens
// checked by TokenReview, `get` on /metrics checked by SubjectAccessReview).
//
// Classic controller bugs are switched on per Widget, at run time, by the annotation
// example.com/bug:
//
//	status-loop   write status.lastReconciled on every reconcile; the Widget watch has no
//	              predicate, so each write triggers the next reconcile (a self-triggering loop)
//	fight         force the Widget's ReplicaSets to spec.size+1 replicas, against the deployment
//	              controller of kube-controller-manager, which sets them back
//
// The annotation example.com/retired=true retires a Widget: the operator deletes its Deployment
// (logging "deployment deleted" at info, in either logging mode) and keeps it deleted, a
// controller's delete as operators make them.
//
// A missing RBAC permission is the third bug: run it with an identity that lacks one (the
// harness in test/testenv does, on request).
//
// --shipped-logging makes it log as operators ship: controller-runtime's zap production
// encoder (JSON, sampled) configured with the message under "message", the time under "time"
// (ISO 8601), upper-case levels, at info level (no V(5) "Reconciling" lines); its reconciles
// then log what they change at info (log.FromContext), and it counts the reconciles that
// logged a line in widget_operator_reconciles_logged_total{controller="widget"}.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zapcore"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// FieldManager is the name the operator's writes carry in managedFields.
const FieldManager = "widget-operator"

// BugAnnotation switches a bug on for one Widget (see the package comment).
const BugAnnotation = "example.com/bug"

// RetiredAnnotation set to "true" retires a Widget: its Deployment is deleted.
const RetiredAnnotation = "example.com/retired"

// WidgetLabel is set on each Deployment's pod template (and so on its ReplicaSets and pods).
const WidgetLabel = "example.com/widget"

var widgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

func main() {
	metricsAddr := flag.String("metrics-bind-address", "127.0.0.1:8443", "address of /metrics")
	secure := flag.Bool("metrics-secure", true, "serve /metrics over HTTPS with authentication and authorization (kubebuilder v4's default); false: plain HTTP, open")
	workers := flag.Int("workers", 1, "concurrent reconciles")
	namespace := flag.String("namespace", "", "watch only this namespace (default: all)")
	bugs := flag.Bool("bugs", true, "honour the example.com/bug annotation; false: the fixed build, which ignores it (for kubectl informer reenact's tests)")
	shipped := flag.Bool("shipped-logging", false, "log as operators ship: zap's production JSON encoder with \"message\", \"time\" and upper-case levels, at info level, each reconcile logging what it changes (overrides the --zap-* flags)")
	// controller-runtime's config loader registers --kubeconfig on the default flag set.
	opts := zap.Options{Development: true}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	if *shipped {
		opts = shippedLogging()
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	if err := run(*metricsAddr, *secure, *workers, *namespace, *bugs, *shipped); err != nil {
		fmt.Fprintln(os.Stderr, "widget-operator:", err)
		os.Exit(1)
	}
}

// shippedLogging is controller-runtime's production logging as operators configure it: zap's
// JSON encoder (sampled: the first 100 lines of a message each second, then every 100th),
// info level, the message under "message", the time under "time" in ISO 8601, levels
// upper-case ("INFO", "ERROR").
func shippedLogging() zap.Options {
	return zap.Options{Development: false, Level: zapcore.InfoLevel, TimeEncoder: zapcore.ISO8601TimeEncoder,
		EncoderConfigOptions: []zap.EncoderConfigOption{func(c *zapcore.EncoderConfig) {
			c.MessageKey, c.TimeKey, c.EncodeLevel = "message", "time", zapcore.CapitalLevelEncoder
		}}}
}

// reconcilesLogged counts the reconciles that logged at least one line (--shipped-logging): an
// info line of their own, or controller-runtime's "Reconciler error" of one that failed.
var reconcilesLogged = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "widget_operator_reconciles_logged_total",
	Help: "Reconciles that logged at least one line (--shipped-logging).",
}, []string{"controller"})

func run(metricsAddr string, secure bool, workers int, namespace string, bugs, shipped bool) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	metrics := metricsserver.Options{BindAddress: metricsAddr, SecureServing: secure}
	if secure {
		metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	mopts := ctrl.Options{Scheme: scheme, Metrics: metrics, HealthProbeBindAddress: "0"}
	if namespace != "" {
		mopts.Cache.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	mgr, err := ctrl.NewManager(cfg, mopts)
	if err != nil {
		return err
	}
	r := &reconciler{c: client.WithFieldOwner(mgr.GetClient(), FieldManager), fixed: !bugs, logs: shipped}
	if shipped {
		crmetrics.Registry.MustRegister(reconcilesLogged)
	}
	widget := &unstructured.Unstructured{}
	widget.SetGroupVersionKind(widgetGVK)
	err = ctrl.NewControllerManagedBy(mgr).
		Named("widget").
		// No GenerationChangedPredicate on purpose: a status write triggers a reconcile, which is
		// what makes the status-loop bug loop (and what many real operators do by accident).
		For(widget).
		Owns(&appsv1.Deployment{}).
		Watches(&appsv1.ReplicaSet{}, handler.EnqueueRequestsFromMapFunc(widgetOfReplicaSet)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
	if err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

// widgetOfReplicaSet maps a ReplicaSet of a Widget's Deployment to the Widget (by WidgetLabel).
func widgetOfReplicaSet(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[WidgetLabel]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
}

type reconciler struct {
	c client.Client
	// fixed ignores BugAnnotation: the build with the bugs fixed.
	fixed bool
	// logs: each reconcile logs what it changes, at info, and is counted when it logs.
	logs bool
}

// Reconcile reconciles one Widget; with logs, it counts itself in reconcilesLogged when it
// logged a line.
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
	if !r.logs {
		return r.reconcile(ctx, req, func(string, ...any) {})
	}
	logged := false
	logger := log.FromContext(ctx)
	defer func() {
		if logged || err != nil { // controller-runtime logs "Reconciler error" for an error
			reconcilesLogged.WithLabelValues("widget").Inc()
		}
	}()
	return r.reconcile(ctx, req, func(msg string, kv ...any) {
		logger.Info(msg, kv...)
		logged = true
	})
}

// reconcile is Reconcile; info logs what it changes.
func (r *reconciler) reconcile(ctx context.Context, req ctrl.Request, info func(msg string, kv ...any)) (ctrl.Result, error) {
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(widgetGVK)
	if err := r.c.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if w.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil // the garbage collector removes the Deployment
	}
	size, found, _ := unstructured.NestedInt64(w.Object, "spec", "size")
	if !found || size < 0 {
		size = 1
	}
	color, _, _ := unstructured.NestedString(w.Object, "spec", "color")
	if color == "" {
		color = "blue"
	}
	bug := w.GetAnnotations()[BugAnnotation]
	if r.fixed {
		bug = ""
	}

	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: w.GetNamespace(), Name: w.GetName()}}
	if w.GetAnnotations()[RetiredAnnotation] == "true" {
		err := r.c.Delete(ctx, dep)
		switch {
		case err == nil && r.logs:
			info("deployment deleted", "deployment", dep.Name)
		case err == nil: // a delete is logged at info in either mode, as operators log theirs
			log.FromContext(ctx).Info("deployment deleted", "deployment", dep.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	op, err := controllerutil.CreateOrUpdate(ctx, r.c, dep, func() error {
		labels := map[string]string{WidgetLabel: w.GetName()}
		dep.Labels = labels
		dep.Spec.Replicas = ptr.To(int32(size))
		if dep.Spec.Selector == nil { // immutable once set
			dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
		}
		dep.Spec.Template.Labels = labels
		if len(dep.Spec.Template.Spec.Containers) == 0 {
			dep.Spec.Template.Spec.Containers = []corev1.Container{{Name: "widget"}}
		}
		dep.Spec.Template.Spec.Containers[0].Image = "example.com/widget:" + color
		return controllerutil.SetControllerReference(w, dep, r.c.Scheme())
	})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("deployment %s: %w", req.NamespacedName, err)
	}
	if op != controllerutil.OperationResultNone {
		info("deployment "+string(op), "deployment", dep.Name, "replicas", size)
	}

	if bug == "fight" {
		if err := r.fight(ctx, w, int32(size)+1, info); err != nil {
			return ctrl.Result{}, err
		}
	}

	status := map[string]any{
		"replicas":           size,
		"readyReplicas":      int64(dep.Status.ReadyReplicas),
		"observedGeneration": w.GetGeneration(),
		"phase":              "Progressing",
	}
	if int64(dep.Status.ReadyReplicas) == size {
		status["phase"] = "Ready"
	}
	if bug == "status-loop" {
		status["lastReconciled"] = time.Now().UTC().Format(time.RFC3339Nano)
	}
	old, _, _ := unstructured.NestedMap(w.Object, "status")
	if equality.Semantic.DeepEqual(old, runtime.DeepCopyJSON(status)) {
		return ctrl.Result{}, nil
	}
	if err := unstructured.SetNestedMap(w.Object, status, "status"); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.c.Status().Update(ctx, w); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: 50 * time.Millisecond}, nil
		}
		return ctrl.Result{}, fmt.Errorf("status of widget %s: %w", req.NamespacedName, err)
	}
	info("status updated", "phase", status["phase"], "readyReplicas", status["readyReplicas"])
	return ctrl.Result{}, nil
}

// fight forces the Widget's ReplicaSets to replicas, a field the deployment controller owns.
func (r *reconciler) fight(ctx context.Context, w client.Object, replicas int32, info func(string, ...any)) error {
	var list appsv1.ReplicaSetList
	if err := r.c.List(ctx, &list, client.InNamespace(w.GetNamespace()), client.MatchingLabels{WidgetLabel: w.GetName()}); err != nil {
		return err
	}
	var errs []error
	for i := range list.Items {
		rs := &list.Items[i]
		if rs.Spec.Replicas != nil && *rs.Spec.Replicas == replicas {
			continue
		}
		rs.Spec.Replicas = ptr.To(replicas)
		if err := r.c.Update(ctx, rs); err != nil && !apierrors.IsConflict(err) {
			errs = append(errs, err)
		} else if err == nil {
			info("replicaset scaled", "replicaset", rs.Name, "replicas", replicas)
		}
	}
	return errors.Join(errs...)
}
