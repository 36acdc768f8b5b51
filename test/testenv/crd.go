package testenv

import (
	"context"
	"fmt"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// WidgetGVR is the resource of WidgetCRD.
var WidgetGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// WidgetCRD returns a fresh namespaced CRD widgets.example.com (kind Widget, short name wdg,
// version v1) with spec.size (integer) and spec.color (string) and a status subresource; other
// fields of spec and status are preserved as given.
func WidgetCRD() *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural:     "widgets",
				Singular:   "widget",
				Kind:       "Widget",
				ListKind:   "WidgetList",
				ShortNames: []string{"wdg"},
			},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name:    "v1",
				Served:  true,
				Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{
					OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object",
						Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"spec": {
								Type:                   "object",
								XPreserveUnknownFields: &preserve,
								Properties: map[string]apiextensionsv1.JSONSchemaProps{
									"size":  {Type: "integer"},
									"color": {Type: "string"},
								},
							},
							"status": {Type: "object", XPreserveUnknownFields: &preserve},
						},
					},
				},
				// Status is a subresource, as kubebuilder generates it: the operator's status
				// writes go through widgets/status and do not bump metadata.generation.
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
					{Name: "Size", Type: "integer", JSONPath: ".spec.size"},
					{Name: "Color", Type: "string", JSONPath: ".spec.color"},
					{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
				},
			}},
		},
	}
}

// InstallCRD creates crd (an existing one of that name is accepted) and waits until it is
// Established and discovery serves all its served versions.
func (c *Cluster) InstallCRD(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	cs, err := apiextensionsclient.NewForConfig(c.RESTConfig)
	if err != nil {
		return err
	}
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd.DeepCopy(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create CRD %s: %w", crd.Name, err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // retry
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not Established: %w", crd.Name, err)
	}
	if err := waitCRDServed(ctx, c.RESTConfig, crd); err != nil {
		return err
	}
	c.mu.Lock()
	c.crds = append(c.crds, crd.DeepCopy())
	c.mu.Unlock()
	return nil
}

// waitCRDServed waits until the API server of cfg lists crd's resource in discovery.
func waitCRDServed(ctx context.Context, cfg *rest.Config, crd *apiextensionsv1.CustomResourceDefinition) error {
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		gv := crd.Spec.Group + "/" + v.Name
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			list, err := disc.ServerResourcesForGroupVersion(gv)
			if err != nil {
				return false, nil //nolint:nilerr // not served yet
			}
			for _, r := range list.APIResources {
				if r.Name == crd.Spec.Names.Plural {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("discovery at %s does not serve %s in %s: %w", cfg.Host, crd.Spec.Names.Plural, gv, err)
		}
	}
	return nil
}

// waitReady polls /readyz of the API server of cfg.
func waitReady(ctx context.Context, cfg *rest.Config, timeout time.Duration) error {
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := disc.RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil, nil
	})
}

// ClusterScopedCRD returns a fresh cluster-scoped CRD <plural>.<group> (kind kind, version v1)
// whose objects keep any spec and status: an owner tree of cluster-scoped custom resources, as
// operators that own claims and Nodes build it.
func ClusterScopedCRD(group, plural, kind string) *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve}}}},
		},
	}
}
