package watch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Every forbidden resource is named, in the order given, once every informer had its answer.
func TestForbiddanceNamesEveryResource(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	deploy, cm, pods := &resourceInformer{}, &resourceInformer{}, &resourceInformer{}
	f := &forbiddance{ctx: ctx, informers: []*resourceInformer{deploy, cm, pods}, cancel: cancel}
	f.add(pods, &ForbiddenError{Resource: "pods"})
	f.add(pods, &ForbiddenError{Resource: "pods", Message: "again"}) // the reflector retries
	time.Sleep(30 * time.Millisecond)
	if ctx.Err() != nil {
		t.Fatal("the run ended before every resource had an answer")
	}
	cm.answered.Store(true)
	f.add(deploy, &ForbiddenError{Resource: "deployments.apps"})
	<-ctx.Done()
	var errs ForbiddenErrors
	if err := f.wait(); !errors.As(err, &errs) {
		t.Fatalf("wait() = %v, want ForbiddenErrors", err)
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Resource+" "+e.Message)
	}
	if diff := cmp.Diff([]string{"deployments.apps ", "pods "}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// One resource refused among others that never answer: the run still ends, after the grace, or
// at once when interrupted.
func TestForbiddanceInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	slow := &resourceInformer{}
	cm := &resourceInformer{}
	f := &forbiddance{ctx: ctx, informers: []*resourceInformer{cm, slow}, cancel: cancel}
	f.add(cm, &ForbiddenError{Resource: "configmaps"})
	cancel()
	var fe *ForbiddenError
	if err := f.wait(); !errors.As(err, &fe) || fe.Resource != "configmaps" {
		t.Fatalf("wait() = %v, want the configmaps ForbiddenError", err)
	}
}

func TestForbiddanceNone(t *testing.T) {
	f := &forbiddance{ctx: context.Background(), cancel: func() {}}
	if err := f.wait(); err != nil {
		t.Fatal(err)
	}
}
