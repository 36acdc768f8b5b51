package watch

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// watchOnly is a lister whose Watch returns one given watch.
type watchOnly struct{ w watch.Interface }

func (l watchOnly) List(context.Context, metav1.ListOptions) (runtime.Object, error) {
	return nil, nil
}

func (l watchOnly) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return l.w, nil
}

// TestTapMapsEvents: the tap hands the reflector an eventMapper's events mapped (and drops
// those it drops), reading them unmapped itself; a consumer of the mapped watch's ResultChan
// gets them mapped as well.
func TestTapMapsEvents(t *testing.T) {
	mapping := func(ev watch.Event) (watch.Event, bool) {
		c, ok := ev.Object.(*compactObject)
		if !ok || c.meta.Name == "dropped" {
			return ev, false
		}
		c.gvk = cms.GVK()
		return ev, true
	}
	obj := func(name string) *compactObject {
		return &compactObject{meta: compactMeta{Name: name, ResourceVersion: "1"}}
	}
	for _, viaTap := range []bool{true, false} {
		fake := watch.NewFakeWithChanSize(2, false)
		m := newMappedWatch(fake, mapping)
		fake.Add(obj("dropped"))
		fake.Add(obj("kept"))
		var w watch.Interface = m
		if viaTap {
			ri, _ := newTestInformer(t)
			ri.tap.inner = watchOnly{w: m}
			var err error
			if w, err = ri.tap.watch(context.Background(), metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		ev := <-w.ResultChan()
		if c, ok := ev.Object.(*compactObject); !ok || c.meta.Name != "kept" || c.gvk != cms.GVK() {
			t.Errorf("via the tap %v: first event %s %#v, want kept, mapped", viaTap, ev.Type, ev.Object)
		}
		w.Stop()
	}
}
