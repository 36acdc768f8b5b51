package watch_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Tapping an informer: Run starts client-go's informer machinery for each resource and sends
// one typed Event per thing it receives (here from a fake client holding one ConfigMap; the
// plugin hands it a real one): the object lines of the initial list, then Synced once the
// cache is in. Run never prints; pkg/printer renders the events.
func Example() {
	configmaps := discovery.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{configmaps.GVR(): "ConfigMapList"})
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings", "namespace": "demo"}}}
	if _, err := client.Resource(configmaps.GVR()).Namespace("demo").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		panic(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan watch.Event, 100)
	done := make(chan error, 1)
	go func() {
		done <- watch.Run(ctx, watch.Config{Client: client, Resources: []discovery.Resource{configmaps}, Namespace: "demo", ListMode: watch.ListModeList}, events)
	}()
	for ev := range events {
		if ev.Type.IsObject() {
			fmt.Printf("%s %s/%s initial list: %v\n", ev.Type, ev.Namespace, ev.Name, ev.Obj.InitialList)
		}
		if ev.Type == watch.Synced {
			fmt.Println("synced", ev.Resource.Resource)
			cancel() // Run closes events once everything has stopped
		}
	}
	if err := <-done; err != nil {
		panic(err)
	}
	// Output:
	// Added demo/settings initial list: true
	// synced configmaps
}
