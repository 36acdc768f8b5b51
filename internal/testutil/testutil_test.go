package testutil

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodedNumbers(t *testing.T) {
	want := map[string]any{"spec": map[string]any{"replicas": int64(3), "ratio": 0.5, "big": int64(12345678901234)}}
	if diff := cmp.Diff(want, JSON(t, `{"spec":{"replicas":3,"ratio":0.5,"big":12345678901234}}`)); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, YAML(t, "spec: {replicas: 3, ratio: 0.5, big: 12345678901234}").Object); diff != "" {
		t.Errorf("YAML (-want +got):\n%s", diff)
	}
}

func TestObject(t *testing.T) {
	o := Object("v1", "ConfigMap", "", "a", "7")
	ns, found := o.Object["metadata"].(map[string]any)["namespace"]
	if o.GetName() != "a" || o.GetResourceVersion() != "7" || o.GetKind() != "ConfigMap" || !found || ns != "" {
		t.Errorf("object %v", o.Object)
	}
}
