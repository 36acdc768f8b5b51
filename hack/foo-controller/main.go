// Command foo-controller is the second test controller of kubectl-informer, beside
// hack/widget-operator: a client-go controller written as client-go's sample-controller and
// workqueue examples are (shared informers, an owner-mapping handler, a rate-limited workqueue,
// klog text logs, a full Update of the Deployment it owns). It keeps one Deployment per Foo
// (samplecontroller.kubectl-informer.dev/v1alpha1, test/testenv.FooCRD): spec.deploymentName,
// spec.replicas; status.availableReplicas. It is built for the tests, never shipped.
//
// Like sample-controller, it resets the Deployment's spec.replicas to Foo.spec.replicas
// whenever they differ, so an external writer of spec.replicas (kubectl scale, an autoscaler)
// and this controller fight over that field. The annotation
// samplecontroller.kubectl-informer.dev/bug on a Foo switches more bugs on, at run time:
//
//	status-loop   write status.lastSynced on every sync; the Foo informer enqueues every
//	              update, so each status write triggers the next sync (a self-triggering loop)
//	respect-scale (not a bug) create the Deployment with Foo.spec.replicas, then leave its
//	              spec.replicas to others: no fight with kubectl scale
//
// Its /healthz on --health-bind-address answers 200 once its informers have synced; /metrics
// there serves client-go's workqueue metrics of its queue (name="foo") and
// foo_controller_syncs_total{namespace,name,result}, its own count of its syncs. It logs with
// component-base's logging flags, as kube-controller-manager does: klog text by default,
// --logging-format=json for JSON lines; "Successfully synced" (every sync that succeeded) and
// "Error syncing" (every one that failed) are logged at the default verbosity.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/time/rate"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"

	// --logging-format=json, as kube-controller-manager registers it.
	_ "k8s.io/component-base/logs/json/register"
)

// FieldManager is the name the controller's writes carry in managedFields.
const FieldManager = "foo-controller"

// BugAnnotation switches a bug on for one Foo (see the package comment).
const BugAnnotation = "samplecontroller.kubectl-informer.dev/bug"

// FooGVR is the Foo resource.
var FooGVR = schema.GroupVersionResource{Group: "samplecontroller.kubectl-informer.dev", Version: "v1alpha1", Resource: "foos"}

var fooGVK = schema.GroupVersionKind{Group: FooGVR.Group, Version: FooGVR.Version, Kind: "Foo"}

// Foo is the typed view of a Foo object.
type Foo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              FooSpec   `json:"spec"`
	Status            FooStatus `json:"status"`
}

// FooSpec is the spec of a Foo.
type FooSpec struct {
	DeploymentName string `json:"deploymentName"`
	Replicas       *int32 `json:"replicas"`
}

// FooStatus is the status of a Foo.
type FooStatus struct {
	AvailableReplicas int32  `json:"availableReplicas"`
	LastSynced        string `json:"lastSynced,omitempty"`
}

// DeepCopy copies a Foo.
func (f *Foo) DeepCopy() *Foo {
	out := *f
	f.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if f.Spec.Replicas != nil {
		r := *f.Spec.Replicas
		out.Spec.Replicas = &r
	}
	return &out
}

// DeepCopyObject makes a Foo a runtime.Object (for the event recorder).
func (f *Foo) DeepCopyObject() runtime.Object { return f.DeepCopy() }

const (
	// SuccessSynced is the Event reason when a Foo is synced.
	SuccessSynced = "Synced"
	// ErrResourceExists is the Event reason when a Deployment of that name is not ours.
	ErrResourceExists = "ErrResourceExists"
	// MessageResourceSynced is the Event message when a Foo is synced.
	MessageResourceSynced = "Foo synced successfully"
)

func main() {
	logConfig := logsapi.NewLoggingConfiguration()
	logsapi.AddGoFlags(logConfig, flag.CommandLine)
	kubeconfig := flag.String("kubeconfig", "", "path to a kubeconfig")
	namespace := flag.String("namespace", "", "watch only this namespace (default: all)")
	health := flag.String("health-bind-address", "127.0.0.1:0", "address of /healthz")
	workers := flag.Int("workers", 2, "concurrent syncs")
	flag.Parse()
	if err := logsapi.ValidateAndApply(logConfig, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := klog.FromContext(ctx)
	if err := run(ctx, *kubeconfig, *namespace, *health, *workers); err != nil {
		logger.Error(err, "Error running controller")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
}

func run(ctx context.Context, kubeconfig, namespace, health string, workers int) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("error building kubeconfig: %w", err)
	}
	cfg.UserAgent = FieldManager
	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dynClient, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	kubeInformers := informers.NewSharedInformerFactoryWithOptions(kubeClient, 30*time.Second, informers.WithNamespace(namespace))
	fooInformers := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynClient, 30*time.Second, namespace, nil)
	c := NewController(ctx, kubeClient, dynClient, kubeInformers.Apps().V1().Deployments(), fooInformers.ForResource(FooGVR))
	kubeInformers.Start(ctx.Done())
	fooInformers.Start(ctx.Done())

	ln, err := net.Listen("tcp", health)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: serveMux(&c.synced), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	return c.Run(ctx, workers)
}

// Controller is the Foo controller.
type Controller struct {
	kubeclientset     kubernetes.Interface
	fooClient         dynamic.NamespaceableResourceInterface
	deploymentsLister appslisters.DeploymentLister
	deploymentsSynced cache.InformerSynced
	foosLister        cache.GenericLister
	foosSynced        cache.InformerSynced

	// workqueue is a rate limited work queue: a Foo is processed by one worker at a time, and
	// a Foo whose sync failed is retried with backoff.
	workqueue workqueue.TypedRateLimitingInterface[cache.ObjectName]
	recorder  record.EventRecorder
	synced    atomic.Bool
}

// NewController returns a Foo controller over these informers.
func NewController(ctx context.Context, kubeclientset kubernetes.Interface, dynClient dynamic.Interface,
	deploymentInformer interface {
		Informer() cache.SharedIndexInformer
		Lister() appslisters.DeploymentLister
	}, fooInformer informers.GenericInformer) *Controller {
	logger := klog.FromContext(ctx)

	logger.V(4).Info("Creating event broadcaster")
	eventBroadcaster := record.NewBroadcaster(record.WithContext(ctx))
	eventBroadcaster.StartStructuredLogging(0)
	eventBroadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kubeclientset.CoreV1().Events("")})
	recorder := eventBroadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: FieldManager})
	ratelimiter := workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](5*time.Millisecond, 1000*time.Second),
		&workqueue.TypedBucketRateLimiter[cache.ObjectName]{Limiter: rate.NewLimiter(rate.Limit(50), 300)},
	)

	controller := &Controller{
		kubeclientset:     kubeclientset,
		fooClient:         dynClient.Resource(FooGVR),
		deploymentsLister: deploymentInformer.Lister(),
		deploymentsSynced: deploymentInformer.Informer().HasSynced,
		foosLister:        fooInformer.Lister(),
		foosSynced:        fooInformer.Informer().HasSynced,
		workqueue: workqueue.NewTypedRateLimitingQueueWithConfig(ratelimiter,
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: QueueName}),
		recorder: recorder,
	}

	logger.Info("Setting up event handlers")
	// Every change of a Foo enqueues it (no predicate: a status write enqueues it too).
	_, _ = fooInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: controller.enqueueFoo,
		UpdateFunc: func(_, new interface{}) {
			controller.enqueueFoo(new)
		},
	})
	// A change of a Deployment enqueues the Foo that owns it (handleObject), so that a
	// Deployment changed by someone else is put back.
	_, _ = deploymentInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: controller.handleObject,
		UpdateFunc: func(old, new interface{}) {
			newDepl := new.(*appsv1.Deployment)
			oldDepl := old.(*appsv1.Deployment)
			if newDepl.ResourceVersion == oldDepl.ResourceVersion {
				// Periodic resync sends update events for all known Deployments; two
				// versions of one Deployment always have different resource versions.
				return
			}
			controller.handleObject(new)
		},
		DeleteFunc: controller.handleObject,
	})
	return controller
}

// Run waits for the informers' caches, starts workers and blocks until ctx is done, then
// shuts the workqueue down and waits for the workers to finish.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrashWithContext(ctx)
	defer c.workqueue.ShutDown()
	logger := klog.FromContext(ctx)

	logger.Info("Starting Foo controller")
	logger.Info("Waiting for informer caches to sync")
	if ok := cache.WaitForCacheSync(ctx.Done(), c.deploymentsSynced, c.foosSynced); !ok {
		return errors.New("failed to wait for caches to sync")
	}
	c.synced.Store(true)

	logger.Info("Starting workers", "count", workers)
	for i := 0; i < workers; i++ {
		go wait.UntilWithContext(ctx, c.runWorker, time.Second)
	}
	logger.Info("Started workers")
	<-ctx.Done()
	logger.Info("Shutting down workers")
	return nil
}

// runWorker processes items of the workqueue until it is shut down.
func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

// processNextWorkItem reads one item off the workqueue and syncs it.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	objRef, shutdown := c.workqueue.Get()
	logger := klog.FromContext(ctx)
	if shutdown {
		return false
	}
	// Done tells the queue this item is processed; until then no other worker gets it.
	defer c.workqueue.Done(objRef)

	err := c.syncHandler(ctx, objRef)
	countSync(objRef, err)
	if err == nil {
		// No error: forget the item's rate-limiting history.
		c.workqueue.Forget(objRef)
		logger.Info("Successfully synced", "objectName", objRef)
		return true
	}
	// A transient error: put the item back, with backoff.
	utilruntime.HandleErrorWithContext(ctx, err, "Error syncing; requeuing for later retry", "objectReference", objRef)
	c.workqueue.AddRateLimited(objRef)
	return true
}

// syncHandler drives the Deployment of one Foo towards its spec and writes the Foo's status.
func (c *Controller) syncHandler(ctx context.Context, objectRef cache.ObjectName) error {
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "objectRef", objectRef)

	foo, err := c.getFoo(objectRef)
	if err != nil {
		if apierrors.IsNotFound(err) {
			utilruntime.HandleErrorWithContext(ctx, err, "Foo referenced by item in work queue no longer exists", "objectReference", objectRef)
			return nil
		}
		return err
	}
	deploymentName := foo.Spec.DeploymentName
	if deploymentName == "" {
		// A user error: nothing to do until the Foo is changed.
		utilruntime.HandleErrorWithContext(ctx, nil, "Deployment name missing from object reference", "objectReference", objectRef)
		return nil
	}
	bug := foo.Annotations[BugAnnotation]

	deployment, err := c.deploymentsLister.Deployments(foo.Namespace).Get(deploymentName)
	if apierrors.IsNotFound(err) {
		deployment, err = c.kubeclientset.AppsV1().Deployments(foo.Namespace).Create(ctx, newDeployment(foo), metav1.CreateOptions{FieldManager: FieldManager})
	}
	if err != nil {
		return err
	}
	if !metav1.IsControlledBy(deployment, foo) {
		msg := fmt.Sprintf("Resource %q already exists and is not managed by Foo", deployment.Name)
		c.recorder.Event(foo, corev1.EventTypeWarning, ErrResourceExists, msg)
		return errors.New(msg)
	}

	// The fight: whoever else set spec.replicas, it is put back to the Foo's (a full Update of
	// the Deployment as this controller builds it).
	if bug != "respect-scale" && foo.Spec.Replicas != nil && deployment.Spec.Replicas != nil && *foo.Spec.Replicas != *deployment.Spec.Replicas {
		logger.V(4).Info("Update deployment resource", "currentReplicas", *deployment.Spec.Replicas, "desiredReplicas", *foo.Spec.Replicas)
		deployment, err = c.kubeclientset.AppsV1().Deployments(foo.Namespace).Update(ctx, newDeployment(foo), metav1.UpdateOptions{FieldManager: FieldManager})
		if err != nil {
			return err
		}
	}

	if err := c.updateFooStatus(ctx, foo, deployment, bug == "status-loop"); err != nil {
		return err
	}
	c.recorder.Event(foo, corev1.EventTypeNormal, SuccessSynced, MessageResourceSynced)
	return nil
}

// getFoo reads a Foo from the informer's cache, as its typed view.
func (c *Controller) getFoo(ref cache.ObjectName) (*Foo, error) {
	obj, err := c.foosLister.ByNamespace(ref.Namespace).Get(ref.Name)
	if err != nil {
		return nil, err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("unexpected object %T in the Foo cache", obj)
	}
	foo := &Foo{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, foo); err != nil {
		return nil, err
	}
	foo.SetGroupVersionKind(fooGVK)
	return foo, nil
}

// updateFooStatus writes status.availableReplicas (and, in the status-loop bug, the time).
func (c *Controller) updateFooStatus(ctx context.Context, foo *Foo, deployment *appsv1.Deployment, loop bool) error {
	if !loop && foo.Status.AvailableReplicas == deployment.Status.AvailableReplicas {
		return nil
	}
	fooCopy := foo.DeepCopy()
	fooCopy.Status.AvailableReplicas = deployment.Status.AvailableReplicas
	if loop {
		fooCopy.Status.LastSynced = time.Now().UTC().Format(time.RFC3339Nano)
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(fooCopy)
	if err != nil {
		return err
	}
	_, err = c.fooClient.Namespace(foo.Namespace).UpdateStatus(ctx, &unstructured.Unstructured{Object: obj}, metav1.UpdateOptions{FieldManager: FieldManager})
	return err
}

// enqueueFoo puts the key of a Foo on the workqueue.
func (c *Controller) enqueueFoo(obj interface{}) {
	objectRef, err := cache.ObjectToName(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.workqueue.Add(objectRef)
}

// handleObject enqueues the Foo that owns obj (its controller owner reference), if any. It also
// takes tombstones of deleted objects.
func (c *Controller) handleObject(obj interface{}) {
	var object metav1.Object
	var ok bool
	logger := klog.FromContext(context.Background())
	if object, ok = obj.(metav1.Object); !ok {
		tombstone, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			utilruntime.HandleError(fmt.Errorf("error decoding object, invalid type"))
			return
		}
		object, ok = tombstone.Obj.(metav1.Object)
		if !ok {
			utilruntime.HandleError(fmt.Errorf("error decoding object tombstone, invalid type"))
			return
		}
		logger.V(4).Info("Recovered deleted object", "resourceName", object.GetName())
	}
	logger.V(4).Info("Processing object", "object", klog.KObj(object))
	if ownerRef := metav1.GetControllerOf(object); ownerRef != nil {
		if ownerRef.Kind != "Foo" {
			return
		}
		foo, err := c.getFoo(cache.ObjectName{Namespace: object.GetNamespace(), Name: ownerRef.Name})
		if err != nil {
			logger.V(4).Info("Ignore orphaned object", "object", klog.KObj(object), "foo", ownerRef.Name)
			return
		}
		c.enqueueFoo(foo)
	}
}

// newDeployment is the Deployment of a Foo, as this controller writes it in full.
func newDeployment(foo *Foo) *appsv1.Deployment {
	labels := map[string]string{
		"app":        "nginx",
		"controller": foo.Name,
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:      foo.Spec.DeploymentName,
			Namespace: foo.Namespace,
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(foo, fooGVK),
			},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: foo.Spec.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "nginx", Image: "nginx:latest"}},
				},
			},
		},
	}
}
