package recording

import (
	"encoding/json"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func benchPod(tb testing.TB) *corev1.Pod {
	b, err := os.ReadFile("../../pkg/printer/testdata/kwok-pod.json")
	if err != nil {
		tb.Fatal(err)
	}
	var pod corev1.Pod
	if err := json.Unmarshal(b, &pod); err != nil {
		tb.Fatal(err)
	}
	pod.APIVersion, pod.Kind = "v1", "Pod"
	return &pod
}

func BenchmarkEncodeObjectPod(b *testing.B) {
	pod := benchPod(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeObject(pod); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshalPod(b *testing.B) {
	pod := benchPod(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(pod); err != nil {
			b.Fatal(err)
		}
	}
}
