package clients

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
)

// TestAPFNamesReadBeside: the APF names are read beside the informers' start, not before it,
// and a resolve waits for that first read (or for its context).
func TestAPFNamesReadBeside(t *testing.T) {
	fs := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
		"metadata": map[string]any{"name": "workload-low", "uid": "fs-1"}}}
	pl := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
		"metadata": map[string]any{"name": "low", "uid": "pl-1"}}}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		flowSchemas: "FlowSchemaList", priorityLevels: "PriorityLevelConfigurationList"}, fs, pl)
	release := make(chan struct{})
	client.PrependReactor("list", "flowschemas", func(k8stesting.Action) (bool, runtime.Object, error) {
		<-release
		return false, nil, nil
	})
	n := NewAPFNames(context.Background(), client) // must not wait for the blocked list
	got := make(chan apistats.APF, 1)
	go func() {
		got <- n.resolve(context.Background(), apistats.APF{FlowSchemaUID: "fs-1", PriorityLevelUID: "pl-1"})
	}()
	select {
	case a := <-got:
		t.Fatalf("resolved before the names were read: %+v", a)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if a := <-got; a.FlowSchema != "workload-low" || a.PriorityLevel != "low" || a.Note != "" {
		t.Errorf("resolved %+v", a)
	}

	blocked := &APFNames{first: make(chan struct{})} // a first read that never ends
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if a := blocked.resolve(ctx, apistats.APF{FlowSchemaUID: "fs-1"}); !strings.Contains(a.Note, "ended before they were read") {
		t.Errorf("resolve after the run ended: %+v", a)
	}
	// The summary at the end resolves with the run's context done: names read are names known,
	// every time (a select between two ready cases would choose at random).
	for range 200 {
		if a := n.resolve(ctx, apistats.APF{FlowSchemaUID: "fs-1", PriorityLevelUID: "pl-1"}); a.FlowSchema != "workload-low" || a.Note != "" {
			t.Fatalf("resolve with the names read and the run ended: %+v", a)
		}
	}
}
