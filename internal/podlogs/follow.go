package podlogs

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	apiwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubectl/pkg/cmd/util/podcmd"

	"github.com/kubectl-informer/kubectl-informer/internal/ctrllog"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Backoff bounds between the reopenings of a container's log stream.
const (
	MinBackoff = time.Second
	MaxBackoff = 30 * time.Second
)

// Verb is the verb of the Error and Recovered lines of pod logs.
const Verb = "logs"

// Follower reads the logs of a workload's pods: it is a ctrllog.Feed.
type Follower struct {
	Client   kubernetes.Interface
	Workload Workload
	// Container is the one container to read (-c); "": the pod's default container
	// (annotation kubectl.kubernetes.io/default-container), else every container of the pod.
	Container string
	// Flag is the --controller-logs-from value, as lines and notices name it.
	Flag string

	// stream opens a container's log; nil: the API server's pod log endpoint.
	stream func(ctx context.Context, namespace, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error)
	// minBackoff and maxBackoff: MinBackoff and MaxBackoff when 0.
	minBackoff, maxBackoff time.Duration
	// lw lists and watches the pods; nil: Client, by the workload's selector.
	lw cache.ListerWatcher

	mu        sync.Mutex
	pods      map[types.UID]*followedPod
	forbidden bool // a 403 said, for the streams of every pod, until one opens
	listErr   bool // a failed list or watch of the pods said, until the informer hears of a pod
	wg        sync.WaitGroup
}

// followedPod is a pod whose containers' logs are read.
type followedPod struct {
	cancel     context.CancelFunc
	ctx        context.Context
	containers map[string]bool
	warned     bool // said that it lacks Container
}

var _ ctrllog.Feed = (*Follower)(nil)

// Run watches the workload's pods and reads their logs until ctx ends.
func (f *Follower) Run(ctx context.Context, sink ctrllog.Sink) {
	f.pods = map[types.UID]*followedPod{}
	lw := f.lw
	if lw == nil {
		lw = f.listWatch()
	}
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
	_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		f.listFailed(err, sink)
	})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { f.sync(ctx, obj, sink) },
		UpdateFunc: func(_, obj any) { f.sync(ctx, obj, sink) },
		DeleteFunc: f.drop,
	})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		inf.RunWithContext(ctx) // returns once its handlers have
	}()
	if cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) && len(inf.GetStore().ListKeys()) == 0 {
		sink.Notice(fmt.Sprintf("--controller-logs-from %s: no pods of %s yet; their logs are read when they start", f.Flag, f.Workload.Name))
	}
	<-stopped
	f.wg.Wait() // no handler starts a stream any more
}

// listWatch lists and watches the workload's pods, by its selector.
func (f *Follower) listWatch() *cache.ListWatch {
	pods := f.Client.CoreV1().Pods(f.Workload.Namespace)
	selected := func(o metav1.ListOptions) metav1.ListOptions {
		o.LabelSelector, o.FieldSelector = f.Workload.LabelSelector, f.Workload.FieldSelector
		return o
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return pods.List(ctx, selected(o))
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (apiwatch.Interface, error) {
			return pods.Watch(ctx, selected(o))
		},
	}
}

// sync starts reading the containers of a pod that have started and are not read yet.
func (f *Follower) sync(ctx context.Context, obj any, sink ctrllog.Sink) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.listErr {
		f.listErr = false
		sink.Event(watch.Event{
			Type:      watch.Recovered,
			Lifecycle: watch.LifecycleInfo{Verb: Verb, Message: fmt.Sprintf("--controller-logs-from %s: the pods of %s can be listed and watched again", f.Flag, f.Workload.Name)},
			Namespace: f.Workload.Namespace,
		})
	}
	p := f.pods[pod.UID]
	if p == nil {
		p = &followedPod{containers: map[string]bool{}}
		p.ctx, p.cancel = context.WithCancel(ctx)
		f.pods[pod.UID] = p
	}
	names := Containers(pod, f.Container)
	if len(names) == 0 && !p.warned {
		p.warned = true
		sink.Notice(fmt.Sprintf("--controller-logs-from %s: pod %s/%s has no container %q (it has %v)", f.Flag, pod.Namespace, pod.Name, f.Container, allContainers(pod)))
	}
	for _, c := range names {
		if p.containers[c] || !Started(pod, c) {
			continue
		}
		p.containers[c] = true
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.follow(p.ctx, pod.Namespace, pod.Name, c, sink)
		}()
	}
}

// drop ends the reading of a deleted pod's logs.
func (f *Follower) drop(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.pods[pod.UID]; p != nil {
		p.cancel()
		delete(f.pods, pod.UID)
	}
}

// Containers are the containers of pod whose logs are read: want alone when given (none if the
// pod lacks it), else the one kubectl's default-container annotation names, else all of them.
// Init and ephemeral containers are not read.
func Containers(pod *corev1.Pod, want string) []string {
	has := func(name string) bool {
		return slices.ContainsFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == name })
	}
	if want != "" {
		if has(want) {
			return []string{want}
		}
		return nil
	}
	if def := pod.Annotations[podcmd.DefaultContainerAnnotationName]; def != "" && has(def) {
		return []string{def}
	}
	return allContainers(pod)
}

func allContainers(pod *corev1.Pod) []string {
	names := make([]string, 0, len(pod.Spec.Containers))
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	return names
}

// Started reports whether a container of pod has a log to read: it runs or ran. Without its
// status, the pod's phase says.
func Started(pod *corev1.Pod, container string) bool {
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == container {
			return s.State.Running != nil || s.State.Terminated != nil || s.LastTerminationState.Terminated != nil
		}
	}
	switch pod.Status.Phase {
	case corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed:
		return true
	}
	return false
}
