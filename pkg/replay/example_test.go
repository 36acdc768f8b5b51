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
// `kubectl informer watch cm -n demo --record testdata/configmaps.ndjson`: the handler sees the
// initial list, the watch events, and the relist (a tombstone for b, deleted while the watch
// was down).
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
			calls <- fmt.Sprintf("add    %s rv=%s initial=%v", key, rv(obj), isInInitialList)
		},
		UpdateFunc: func(oldObj, newObj any) {
			key, _ := cache.MetaNamespaceKeyFunc(newObj)
			calls <- fmt.Sprintf("update %s rv=%s->%s", key, rv(oldObj), rv(newObj))
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				calls <- fmt.Sprintf("delete %s rv=%s (tombstone)", tomb.Key, rv(tomb.Obj))
				return
			}
			key, _ := cache.MetaNamespaceKeyFunc(obj)
			calls <- fmt.Sprintf("delete %s rv=%s", key, rv(obj))
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
	// add    demo/a rv=10 initial=true
	// add    demo/b rv=11 initial=true
	// add    demo/c rv=12 initial=true
	// add    demo/d rv=101 initial=false
	// update demo/a rv=10->102
	// delete demo/d rv=103
	// delete demo/b rv=11 (tombstone)
	// update demo/a rv=102->102
	// update demo/c rv=12->115
	// add    demo/e rv=118 initial=false
	// update demo/e rv=118->121
}
