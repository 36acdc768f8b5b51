package top

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// The first n objects written are followed; one that leaves them is not any more (its informer
// stops); objects without writes, or not resolved, are not followed.
func TestFollowerStartsAndStops(t *testing.T) {
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{replicasets.GVR(): "ReplicaSetList"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFollower(1, watch.Config{Client: client, ListMode: watch.ListModeList}, 10, time.Minute)
	obj := func(name string, writes int) ObjectRank {
		return ObjectRank{Resource: replicasets.String(), Ref: replicasets, Namespace: "shop", Name: name, Writes: writes}
	}
	f.update(ctx, &Ranking{Objects: []ObjectRank{obj("a", 5), obj("b", 3)}})
	a := f.drills[objectKey{replicasets.String(), "shop", "a"}]
	if len(f.drills) != 1 || a == nil {
		t.Fatalf("following %v, want a only", f.drills)
	}
	f.update(ctx, &Ranking{Objects: []ObjectRank{obj("b", 9), obj("a", 5)}})
	if len(f.drills) != 1 || f.drills[objectKey{replicasets.String(), "shop", "b"}] == nil {
		t.Fatalf("following %v, want b only", f.drills)
	}
	select {
	case <-a.drill.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a left the top, its informer goes on")
	}
	f.update(ctx, &Ranking{Objects: []ObjectRank{obj("c", 0), {Resource: "x", Name: "unresolved", Writes: 3}}})
	if len(f.drills) != 0 {
		t.Errorf("following %v, want nothing (no writes, or no resolved resource)", f.drills)
	}
	f.stop()
}
