// Package testutil holds the test helpers several packages' tests share: objects built or
// decoded the way the dynamic client hands them to an informer.
package testutil

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// Object is an object of apiVersion and kind with only a namespace, a name and a
// resourceVersion; the namespace is set even when empty.
func Object(apiVersion, kind, namespace, name, resourceVersion string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"namespace": namespace, "name": name, "resourceVersion": resourceVersion},
	}}
}

// JSON decodes a JSON object the way the dynamic client does: integers as int64, other numbers
// as float64.
func JSON(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := utiljson.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return m
}

// YAML decodes a YAML object as JSON does: integers as int64.
func YAML(t testing.TB, y string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: JSON(t, string(j))}
}
