// Command minimal is the floor hack/bench compares kubectl-informer against: the smallest
// honest "print what an informer receives" tool. A client-go dynamic shared informer for one
// namespaced resource, one line per handler call, written to a bufio.Writer that is flushed
// after every line (so a pipe sees each event as it happens, as the plugin's output does).
//
//	minimal -kubeconfig KUBECONFIG -n NAMESPACE [-resource configmaps] [-group ""] [-version v1]
//
// It stops on SIGINT or SIGTERM. -strip-managed-fields (or MINIMAL_STRIP_MANAGED_FIELDS=1,
// for hack/bench's variants: minimal+MINIMAL_STRIP_MANAGED_FIELDS=1) drops managedFields in
// an informer transform, as controller-runtime's cache can: an experiment, not the floor.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file")
	namespace := flag.String("n", "default", "namespace")
	group := flag.String("group", "", "API group")
	version := flag.String("version", "v1", "API version")
	resource := flag.String("resource", "configmaps", "resource (plural)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	memProfile := flag.String("memprofile", "", "write a heap profile to this file at the end")
	strip := flag.Bool("strip-managed-fields", os.Getenv("MINIMAL_STRIP_MANAGED_FIELDS") == "1", "drop managedFields before objects enter the cache")
	flag.Parse()
	stopProfiles, err := startProfiles(*cpuProfile, *memProfile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "minimal:", err)
		os.Exit(1)
	}
	err = run(*kubeconfig, *namespace, schema.GroupVersionResource{Group: *group, Version: *version, Resource: *resource}, *strip)
	stopProfiles()
	if err != nil {
		fmt.Fprintln(os.Stderr, "minimal:", err)
		os.Exit(1)
	}
}

// startProfiles starts a CPU profile and returns a func that stops it and writes a heap profile.
func startProfiles(cpu, mem string) (func(), error) {
	var cpuFile *os.File
	if cpu != "" {
		f, err := os.Create(cpu)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, err
		}
		cpuFile = f
	}
	return func() {
		if cpuFile != nil {
			pprof.StopCPUProfile()
			cpuFile.Close()
		}
		if mem != "" {
			if f, err := os.Create(mem); err == nil {
				runtime.GC() // as the plugin's --memprofile does
				_ = pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
	}, nil
}

func run(kubeconfig, namespace string, gvr schema.GroupVersionResource, strip bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, namespace, nil)
	informer := factory.ForResource(gvr).Informer()
	if strip {
		if err := informer.SetTransform(func(obj any) (any, error) {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				u.SetManagedFields(nil)
			}
			return obj, nil
		}); err != nil {
			return err
		}
	}

	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	emit := func(verb string, obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(w, verb, u.GetNamespace()+"/"+u.GetName(), "rv="+u.GetResourceVersion())
		if err := w.Flush(); err != nil {
			stop() // stdout is gone
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { emit("ADDED", obj) },
		UpdateFunc: func(_, obj any) { emit("MODIFIED", obj) },
		DeleteFunc: func(obj any) { emit("DELETED", obj) },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	<-ctx.Done()
	factory.Shutdown()
	return nil
}
