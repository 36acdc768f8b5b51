package replay_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/replay"
)

// A controller's own informer fed a recording made with
// `kubectl informer watch cm -n demo --resync 3s --record testdata/configmaps.ndjson` against a
// test cluster whose API server was restarted: the handler sees the initial list, the watch
// events, and the relist (a tombstone for b, deleted while the watch was down; a delivered
// again unchanged). The recorded resyncs are not replayed: the informer makes its own.
func Example() {
	rec, err := replay.Open("testdata/configmaps.ndjson")
	if err != nil {
		panic(err)
	}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	lw := rec.ListerWatcher(gvr)

	informer := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	calls := make(chan string, 100)
	rv := func(obj any) string { return obj.(*unstructured.Unstructured).GetResourceVersion() }
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			key, _ := cache.MetaNamespaceKeyFunc(obj)
			calls <- fmt.Sprintf("add    %s initial=%v", key, isInInitialList)
		},
		UpdateFunc: func(oldObj, newObj any) {
			key, _ := cache.MetaNamespaceKeyFunc(newObj)
			what := "changed"
			if rv(oldObj) == rv(newObj) {
				what = "same resourceVersion"
			}
			calls <- fmt.Sprintf("update %s (%s)", key, what)
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				calls <- fmt.Sprintf("delete %s (tombstone)", tomb.Key)
				return
			}
			key, _ := cache.MetaNamespaceKeyFunc(obj)
			calls <- fmt.Sprintf("delete %s", key)
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go informer.RunWithContext(ctx)

	// Every handler call the recording makes, then the end of the recording.
	for range rec.HandlerCalls(gvr) {
		fmt.Println(<-calls)
	}
	<-lw.Done()
	// Output:
	// add    demo/a initial=true
	// add    demo/b initial=true
	// add    demo/c initial=true
	// add    demo/d initial=false
	// update demo/a (changed)
	// delete demo/d
	// delete demo/b (tombstone)
	// update demo/a (same resourceVersion)
	// update demo/c (changed)
	// add    demo/e initial=false
	// update demo/e (changed)
}
