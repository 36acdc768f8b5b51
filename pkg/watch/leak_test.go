package watch

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

// Run leaves no goroutine behind: informers, taps, watch forwarders, queues and workers all stop.
func TestRunLeavesNoGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{cms.GVR(): "ConfigMapList"})
	obj := cm("a", "")
	if _, err := client.Resource(cms.GVR()).Namespace("ns").Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan Event, 100)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Client: client, Resources: []discovery.Resource{cms}, Namespace: "ns",
			Queue: QueueConfig{Workers: 3, ReconcileTime: time.Millisecond},
			// The fake client never ends a streaming list: this also runs the fallback.
			SyncTimeout: 100 * time.Millisecond}, out)
	}()
	for ev := range out {
		if ev.Type == Synced {
			break
		}
	}
	cancel()
	for range out { // Run closes out when everything stopped
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
