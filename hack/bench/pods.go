package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// Workloads (-workload).
const (
	workloadConfigMaps = "configmaps"
	// workloadPods: pods made by kube-controller-manager from Deployments (their ReplicaSets),
	// one per kwok node and pinned to it, and run by kwok.
	workloadPods = "pods"
)

// resArg and resPlural name the workload's resource on the tools' command lines.
var (
	resArg    = "cm"
	resPlural = "configmaps"
)

// podIndex maps the pods workload's pod names to their object numbers (nil: ConfigMaps, whose
// names carry their number).
var podIndex map[string]int

// podsPerNode is the capacity of the bench's kwok nodes.
const podsPerNode = 1000

// populatePods creates kwok nodes for c.objects pods and one Deployment per node, pinned to
// it, waits until every pod runs, and numbers the pods.
//
// The pods are made by kube-controller-manager (a ReplicaSet per Deployment) and run by kwok,
// as on a real cluster, but bound by their template's nodeName, not by kube-scheduler: at
// 50,000 pods the scheduler (51 nodes filtered and scored per pod, ~70% of a core) bounded
// the creation to ~18 pods a second on the 2-core machine, and the bench measures the
// watchers, not the scheduler. A Deployment per node keeps every node at its capacity.
func (b *bench) populatePods(ctx context.Context) error {
	nodes := (b.c.objects + podsPerNode - 1) / podsPerNode
	logf("creating %d kwok nodes of %d pods", nodes, podsPerNode)
	for i := range nodes {
		if err := b.addNode(ctx, fmt.Sprintf("bench-node-%d", i)); err != nil {
			return err
		}
	}
	// Progress is counted by an informer (protobuf, from the watch cache): each pod decoded
	// once per change. A poll listing every pod decoded 50,000 pods every few seconds and took
	// a quarter of a core from the API server and the controllers.
	cfg := b.restConfig()
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	pcs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactoryWithOptions(pcs, 0, informers.WithNamespace(namespace))
	podInformer := factory.Core().V1().Pods().Informer()
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)

	start := time.Now()
	logf("creating %d Deployments, %d replicas in all (kube-controller-manager makes the pods, kwok runs them)", nodes, b.c.objects)
	for i := range nodes {
		replicas := min(podsPerNode, b.c.objects-i*podsPerNode)
		labels := map[string]string{"app": "bench", "shard": fmt.Sprint(i)}
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%d", i), Namespace: namespace},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To(int32(replicas)),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						NodeName:   fmt.Sprintf("bench-node-%d", i),
						Containers: []corev1.Container{{Name: "web", Image: "example.com/web:1"}},
						Tolerations: []corev1.Toleration{{Key: "kwok.x-k8s.io/node", Operator: corev1.TolerationOpExists,
							Effect: corev1.TaintEffectNoSchedule}},
					},
				},
			},
		}
		if _, err := b.cs.AppsV1().Deployments(namespace).Create(ctx, d, metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
			return err
		}
	}
	var names []string
	last := -1
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		all := podInformer.GetStore().List()
		names = names[:0]
		for _, o := range all {
			if p := o.(*corev1.Pod); p.Status.Phase == corev1.PodRunning {
				names = append(names, p.Name)
			}
		}
		if len(names) != last && len(names)/1000 != last/1000 {
			logf("  %d of %d pods running", len(names), b.c.objects)
		}
		last = len(names)
		if len(names) == b.c.objects && len(all) == b.c.objects {
			break
		}
		if time.Since(start) > 2*time.Hour {
			return fmt.Errorf("only %d of %d pods running after 2h", len(names), b.c.objects)
		}
		time.Sleep(time.Second)
	}
	logf("%d pods running in %s", len(names), time.Since(start).Round(time.Second))
	// kube-controller-manager writes the ReplicaSets' and Deployments' status after the pods
	// run: the first round would share the API server with those writes.
	if err := b.awaitDeployments(ctx, nodes); err != nil {
		return err
	}
	sort.Strings(names)
	b.podNames = names
	podIndex = make(map[string]int, len(names))
	for i, n := range names {
		podIndex[n] = i
	}
	return nil
}

// awaitDeployments waits until the n bench Deployments and their ReplicaSets report every
// replica available, in status their controllers have written for their current generation.
func (b *bench) awaitDeployments(ctx context.Context, n int) error {
	start := time.Now()
	for {
		ds, err := b.cs.AppsV1().Deployments(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		rss, err := b.cs.AppsV1().ReplicaSets(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		done := len(ds.Items) == n && len(rss.Items) == n
		for _, d := range ds.Items {
			st, want := d.Status, ptr.Deref(d.Spec.Replicas, 1)
			done = done && st.ObservedGeneration == d.Generation && st.Replicas == want &&
				st.UpdatedReplicas == want && st.ReadyReplicas == want && st.AvailableReplicas == want
		}
		for _, rs := range rss.Items {
			st, want := rs.Status, ptr.Deref(rs.Spec.Replicas, 1)
			done = done && st.ObservedGeneration == rs.Generation && st.Replicas == want &&
				st.ReadyReplicas == want && st.AvailableReplicas == want
		}
		if done {
			logf("the Deployments' and ReplicaSets' status written %s later", time.Since(start).Round(time.Second))
			return nil
		}
		if time.Since(start) > 10*time.Minute {
			return fmt.Errorf("the bench Deployments' status was not complete after 10 min")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// addNode creates a kwok-managed node that takes podsPerNode pods.
func (b *bench) addNode(ctx context.Context, name string) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("1000"),
		corev1.ResourceMemory: resource.MustParse("4Ti"),
		corev1.ResourcePods:   *resource.NewQuantity(podsPerNode, resource.DecimalSI),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{testenv.KwokNodeAnnotation: "fake"},
			Labels:      map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "type": "kwok"},
		},
		Status: corev1.NodeStatus{Allocatable: capacity, Capacity: capacity},
	}
	if _, err := b.cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create node %s: %w", name, err)
	}
	return nil
}

// relabelForPods makes the tools' labels name pods.
func relabelForPods() {
	for _, t := range tools {
		t.label = strings.Replace(t.label, " cm ", " pods ", 1)
	}
}
