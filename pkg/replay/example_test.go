package replay_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/replay"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
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

// Reading a recording line by line: the header (a recording.Header), then each event as
// pkg/recording decoded it, an update with its old object taken from the stream.
func ExampleReader() {
	f, err := os.Open("testdata/configmaps.ndjson")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	rd, err := replay.NewReader(f)
	if err != nil {
		panic(err)
	}
	for {
		line, err := rd.Next()
		var unknown *recording.UnknownTypeError
		switch {
		case errors.Is(err, io.EOF):
			return
		case errors.As(err, &unknown):
			continue // a line type newer than this build
		case err != nil:
			panic(err)
		}
		if h := line.Header; h != nil {
			fmt.Printf("line %d: format %d, server %s, %d resource(s)\n", line.Number, h.FormatVersion, h.ServerVersion, len(h.ResourceList()))
			continue
		}
		if ev := line.Event; ev.Type == watch.Updated && ev.Obj.OldObject != nil && line.Number < 12 {
			fmt.Printf("line %d: %s %s/%s, resourceVersion %s -> %s\n", line.Number, ev.Type, ev.Namespace, ev.Name, ev.Obj.OldObject.GetResourceVersion(), ev.ResourceVersion)
		}
	}
	// Output:
	// line 1: format 1, server v1.37.1, 1 resource(s)
	// line 10: Updated demo/a, resourceVersion 210 -> 219
}
