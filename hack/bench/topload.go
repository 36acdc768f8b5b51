package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// The top workload (-workload top): -objects custom resources spread evenly over topResources
// CRDs the bench creates (object i is of resource i%topResources), measured with `kubectl
// informer top` against a --metadata-only watch of the same resources (the floor).
//
// Why CRDs: the bench's objects are then the only objects of those resources, so the count
// each resource must reach is exact (no controller, no API server lease or event adds any),
// and twenty kinds of one shape cost the same to list, so no one resource dominates; a cluster
// with 100,000 objects in 20 resources is mostly operators' custom resources anyway.
const (
	workloadTop  = "top"
	topResources = 20
	topGroup     = "bench.example.com"
	// topTick is how often the bench's writer updates one object of every resource (the
	// marker objects 0..topResources-1), so that every resource is in each ranking of top
	// (which lists a resource only once it was written in the window).
	topTick   = 500 * time.Millisecond
	topWriter = "bench-writer"
)

func topPlural(r int) string { return fmt.Sprintf("bench%02ds", r) }

// topResourceName is resource r as top and watch name it (plural.group).
func topResourceName(r int) string { return topPlural(r) + "." + topGroup }

func topGVR(r int) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: topGroup, Version: "v1", Resource: topPlural(r)}
}

// topResourceArg is the resources for a command line: bench00s.bench.example.com,...
func topResourceArg() string {
	names := make([]string, topResources)
	for r := range names {
		names[r] = topResourceName(r)
	}
	return strings.Join(names, ",")
}

// topWant is how many objects each resource holds when objects are spread over them.
func topWant(objects int) map[string]int {
	want := make(map[string]int, topResources)
	for r := range topResources {
		want[topResourceName(r)] = objects / topResources
		if r < objects%topResources {
			want[topResourceName(r)]++
		}
	}
	return want
}

func topCRD(r int) *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	kind := fmt.Sprintf("Bench%02d", r)
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: topPlural(r) + "." + topGroup},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: topGroup,
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: topPlural(r), Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", XPreserveUnknownFields: &preserve},
					},
				}},
			}},
		},
	}
}

// populateTop creates the CRDs and the objects, c.concurrency at a time.
func (b *bench) populateTop(ctx context.Context) error {
	logf("creating %d CRDs (group %s)", topResources, topGroup)
	for r := range topResources {
		if err := b.cl.InstallCRD(ctx, topCRD(r)); err != nil {
			return err
		}
	}
	dyn, err := dynamic.NewForConfig(b.restConfig())
	if err != nil {
		return err
	}
	b.dyn = dyn
	logf("creating %d custom resources (%d bytes of spec.payload) over %d resources in namespace %s (%d at a time)",
		b.c.objects, b.c.size, topResources, namespace, b.c.concurrency)
	payload := strings.Repeat("x", b.c.size)
	start := time.Now()
	var done atomic.Int64
	err = parallel(ctx, b.c.objects, b.c.concurrency, func(ctx context.Context, i int) error {
		r := i % topResources
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": topGroup + "/v1", "kind": fmt.Sprintf("Bench%02d", r),
			"metadata": map[string]any{"name": objName(i), "namespace": namespace, "labels": map[string]any{"app": "bench"}},
			"spec":     map[string]any{"payload": payload, "index": int64(i)},
		}}
		if _, err := b.dyn.Resource(topGVR(r)).Namespace(namespace).Create(ctx, obj, metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
			return fmt.Errorf("create %s %s: %w", topPlural(r), objName(i), err)
		}
		if n := done.Add(1); n%5000 == 0 {
			logf("  %d created", n)
		}
		return nil
	})
	if err != nil {
		return err
	}
	el := time.Since(start)
	logf("created %d objects in %s (%.0f/s)", b.c.objects, el.Round(time.Millisecond), float64(b.c.objects)/el.Seconds())
	return nil
}

// writeTop updates the marker object of every resource every topTick (an annotation with a
// new value, so every patch is a write) until ctx ends.
func (b *bench) writeTop(ctx context.Context) {
	t := time.NewTicker(topTick)
	defer t.Stop()
	for n := 1; ; n++ {
		patch := []byte(`{"metadata":{"annotations":{"rev":"` + strconv.Itoa(n) + `"}}}`)
		for r := range topResources {
			_, err := b.dyn.Resource(topGVR(r)).Namespace(namespace).Patch(ctx, objName(r), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: topWriter})
			if err != nil && ctx.Err() == nil {
				logf("writer: %s %s: %v", topPlural(r), objName(r), err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
