package discovery

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// crdGVR is the resource of CustomResourceDefinitions.
var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// crdTimeout bounds the read of one CRD: printer columns are a nicety, never a reason to hang.
const crdTimeout = 10 * time.Second

// AddPrinterColumns reads the CustomResourceDefinition of every custom resource in resources
// (once, at startup) and sets its PrinterColumns to the additionalPrinterColumns of the resolved
// version. Built-in resources have no CRD: a resource whose group has no dot is skipped (a CRD's
// group always has one), and a CRD that is not found (an aggregated API) leaves the resource
// without columns. Other failures (a user not allowed to read CRDs) do not stop the watch: they
// come back as warnings, one per resource.
func AddPrinterColumns(ctx context.Context, client dynamic.Interface, resources []Resource) []string {
	var warnings []string
	for i := range resources {
		r := &resources[i]
		if !strings.Contains(r.Group, ".") {
			continue
		}
		name := r.Resource + "." + r.Group
		cctx, cancel := context.WithTimeout(ctx, crdTimeout)
		crd, err := client.Resource(crdGVR).Get(cctx, name, metav1.GetOptions{})
		cancel()
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			warnings = append(warnings, fmt.Sprintf("no printer columns for %s: reading its CustomResourceDefinition: %v", r, err))
			continue
		}
		r.PrinterColumns = printerColumnsOf(crd, r.Version)
	}
	return warnings
}

// printerColumnsOf returns the additionalPrinterColumns that crd (an apiextensions.k8s.io/v1
// CustomResourceDefinition) declares for version.
func printerColumnsOf(crd *unstructured.Unstructured, version string) []PrinterColumn {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		if n, _ := vm["name"].(string); n != version {
			continue
		}
		cols, _ := vm["additionalPrinterColumns"].([]any)
		var out []PrinterColumn
		for _, c := range cols {
			cm, _ := c.(map[string]any)
			col := PrinterColumn{}
			col.Name, _ = cm["name"].(string)
			col.Type, _ = cm["type"].(string)
			col.JSONPath, _ = cm["jsonPath"].(string)
			switch p := cm["priority"].(type) {
			case int64:
				col.Priority = int32(p)
			case float64:
				col.Priority = int32(p)
			}
			if col.Name != "" && col.JSONPath != "" {
				out = append(out, col)
			}
		}
		return out
	}
	return nil
}
