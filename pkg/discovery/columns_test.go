package discovery

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

func widgetCRD() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{"group": "example.com", "versions": []any{
			map[string]any{"name": "v1beta1", "additionalPrinterColumns": []any{
				map[string]any{"name": "Old", "type": "string", "jsonPath": ".spec.old"},
			}},
			map[string]any{"name": "v1", "additionalPrinterColumns": []any{
				map[string]any{"name": "Ready", "type": "string", "jsonPath": `.status.conditions[?(@.type=="Ready")].status`},
				map[string]any{"name": "Owner", "type": "string", "jsonPath": ".spec.owner", "priority": int64(1)},
				map[string]any{"name": "", "type": "string", "jsonPath": ".spec.nameless"},
			}},
		}},
	}}
}

func TestAddPrinterColumns(t *testing.T) {
	scheme := runtime.NewScheme()
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme,
		map[schema.GroupVersionResource]string{crdGVR: "CustomResourceDefinitionList"}, widgetCRD())
	var asked []string
	client.PrependReactor("get", "customresourcedefinitions", func(a clienttesting.Action) (bool, runtime.Object, error) {
		asked = append(asked, a.(clienttesting.GetAction).GetName())
		return false, nil, nil
	})
	resources := []Resource{
		{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true},
		{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true},
		{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true},
		{Group: "metrics.k8s.io", Version: "v1beta1", Resource: "pods", Kind: "PodMetrics", Namespaced: true},
	}
	if warnings := AddPrinterColumns(context.Background(), client, resources); len(warnings) != 0 {
		t.Errorf("warnings %q, want none (a missing CRD is an aggregated API, not a problem)", warnings)
	}
	want := []PrinterColumn{
		{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
		{Name: "Owner", Type: "string", JSONPath: ".spec.owner", Priority: 1},
	}
	if diff := cmp.Diff(want, resources[2].PrinterColumns); diff != "" {
		t.Errorf("widgets columns (-want +got):\n%s", diff)
	}
	for _, i := range []int{0, 1, 3} {
		if resources[i].PrinterColumns != nil {
			t.Errorf("%s got columns %+v, want none", resources[i], resources[i].PrinterColumns)
		}
	}
	// Built-in groups without a dot are never asked about.
	if diff := cmp.Diff([]string{"widgets.example.com", "pods.metrics.k8s.io"}, asked); diff != "" {
		t.Errorf("CRDs read (-want +got):\n%s", diff)
	}
}

func TestAddPrinterColumnsForbidden(t *testing.T) {
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{crdGVR: "CustomResourceDefinitionList"})
	client.PrependReactor("get", "customresourcedefinitions", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errForbidden{}
	})
	resources := []Resource{{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget"}}
	warnings := AddPrinterColumns(context.Background(), client, resources)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "no printer columns for widgets.example.com") {
		t.Errorf("warnings %q, want one about widgets.example.com", warnings)
	}
}

type errForbidden struct{}

func (errForbidden) Error() string { return "forbidden" }
