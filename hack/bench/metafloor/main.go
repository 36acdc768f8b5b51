// Command metafloor is the lower bound hack/bench's top workload compares `kubectl informer top`
// against: client-go metadata-only shared informers (PartialObjectMetadata over protobuf, as
// the plugin's) for the resources given, in all namespaces, each with an event handler that
// only counts. It prints nothing per object: one line per resource once its cache synced,
// in the shape of the plugin's -o json Synced line, so the bench reads both alike:
//
//	{"type":"Synced","group":"bench.example.com","version":"v1","resource":"bench00s","items":1000}
//
//	metafloor -kubeconfig KUBECONFIG -resources bench00s.bench.example.com,bench01s.bench.example.com
//
// It stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file")
	resources := flag.String("resources", "", "resources, comma-separated, as PLURAL.GROUP (version v1)")
	flag.Parse()
	if err := run(*kubeconfig, *resources); err != nil {
		fmt.Fprintln(os.Stderr, "metafloor:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, resources string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 50, 100 // top's defaults
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		return err
	}
	factory := metadatainformer.NewSharedInformerFactory(client, 0)
	type followed struct {
		gvr      schema.GroupVersionResource
		informer cache.SharedIndexInformer
	}
	var all []followed
	var events atomic.Int64
	count := func(any) { events.Add(1) }
	for _, r := range strings.Split(resources, ",") {
		plural, group, _ := strings.Cut(strings.TrimSpace(r), ".")
		if plural == "" {
			continue
		}
		gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: plural}
		inf := factory.ForResource(gvr).Informer()
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: count, UpdateFunc: func(_, o any) { count(o) }, DeleteFunc: count,
		}); err != nil {
			return err
		}
		all = append(all, followed{gvr, inf})
	}
	if len(all) == 0 {
		return fmt.Errorf("no resources given (-resources)")
	}
	factory.Start(ctx.Done())
	enc := json.NewEncoder(os.Stdout)
	var mu sync.Mutex
	for _, f := range all {
		go func() {
			if !cache.WaitForCacheSync(ctx.Done(), f.informer.HasSynced) {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			_ = enc.Encode(map[string]any{"type": "Synced", "group": f.gvr.Group, "version": f.gvr.Version,
				"resource": f.gvr.Resource, "items": len(f.informer.GetStore().ListKeys())})
		}()
	}
	<-ctx.Done()
	factory.Shutdown()
	fmt.Fprintf(os.Stderr, "metafloor: %d events\n", events.Load())
	return nil
}
