package watch

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-informer/kubectl-informer/pkg/state"
)

// BenchmarkDecodeForRead: the kwok pod of the printer's testdata decoded for a pod's state, into a new
// object each time and into one reused (prepared, for a list's lines).
func BenchmarkDecodeForRead(b *testing.B) {
	gvk := corev1.SchemeGroupVersion.WithKind("Pod")
	c, err := compactFromProtobuf(kwokPodProtobuf(b), gvk)
	if err != nil {
		b.Fatal(err)
	}
	metadata, spec, counted, _ := state.NewReader(nil).Reads(gvk.GroupKind())
	cut := newReadCut(&corev1.Pod{}, &Reads{Metadata: metadata, Spec: spec, SpecCounted: counted})
	b.Run("new", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.decodeForRead(cut); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reused", func(b *testing.B) {
		b.ReportAllocs()
		var o runtime.Object
		for b.Loop() {
			if o, err = c.decodeForReadInto(o, cut); err != nil {
				b.Fatal(err)
			}
		}
	})
}
