package printer

import (
	"encoding/json"
	"io"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// kwokPod is a Running pod of make bench's pods workload (kube-controller-manager, kwok), its
// managedFields included.
func kwokPod(tb testing.TB) *corev1.Pod {
	b, err := os.ReadFile("testdata/kwok-pod.json")
	if err != nil {
		tb.Fatal(err)
	}
	var pod corev1.Pod
	if err := json.Unmarshal(b, &pod); err != nil {
		tb.Fatal(err)
	}
	return &pod
}

// benchmarkPodLine is what the informer and the printer do for one line of an initial list of
// pods: the cached protobuf message decoded, handed on typed or converted (typed false: the
// path before issue #37), and printed.
func benchmarkPodLine(b *testing.B, opts Options, typed bool) {
	raw, err := kwokPod(b).Marshal()
	if err != nil {
		b.Fatal(err)
	}
	p := New(io.Discard, opts)
	b.ReportAllocs()
	for b.Loop() {
		pod := &corev1.Pod{}
		if err := pod.Unmarshal(raw); err != nil {
			b.Fatal(err)
		}
		pod.APIVersion, pod.Kind = "v1", "Pod"
		ev := watch.Event{
			Type:            watch.Added,
			Time:            time.Now(),
			Resource:        pods,
			Namespace:       pod.Namespace,
			Name:            pod.Name,
			ResourceVersion: pod.ResourceVersion,
			Obj: watch.ObjectInfo{
				InitialList: true,
				Delta:       watch.DeltaReplaced,
				Typed:       pod,
			},
		}
		if !typed {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
			if err != nil {
				b.Fatal(err)
			}
			ev.Obj.Object, ev.Obj.Typed = &unstructured.Unstructured{Object: m}, nil
		}
		if err := p.Print(&ev); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPodLineHuman(b *testing.B)     { benchmarkPodLine(b, Options{Diff: "inline"}, true) }
func BenchmarkPodLineJSON(b *testing.B)      { benchmarkPodLine(b, Options{Output: "json"}, true) }
func BenchmarkPodLineHumanMaps(b *testing.B) { benchmarkPodLine(b, Options{Diff: "inline"}, false) }
func BenchmarkPodLineJSONMaps(b *testing.B)  { benchmarkPodLine(b, Options{Output: "json"}, false) }
