package watch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	watchapi "k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
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

// With SkipForbidden (kubectl informer top), a forbidden resource stops its own informer after
// one Error line that names it; the others sync and the run goes on.
func TestSkipForbidden(t *testing.T) {
	secrets := discovery.Resource{Version: "v1", Resource: "secrets", Kind: "Secret", Namespaced: true}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{cms.GVR(): "ConfigMapList", secrets.GVR(): "SecretList"})
	refused := apierrors.NewForbidden(secrets.GVR().GroupResource(), "", errors.New("no"))
	client.PrependReactor("list", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, refused })
	client.PrependWatchReactor("secrets", func(k8stesting.Action) (bool, watchapi.Interface, error) { return true, nil, refused })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := make(chan Event, 100)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Client: client, Resources: []discovery.Resource{secrets, cms}, Namespace: "ns",
			ListMode: ListModeList, SkipForbidden: true}, out)
	}()
	forbidden, synced := 0, false
	deadline := time.After(forbiddanceGrace + 5*time.Second)
	for !synced || forbidden == 0 {
		select {
		case ev := <-out:
			switch {
			case ev.Type == Error && ev.Lifecycle.Reason == "Forbidden":
				forbidden++
				if ev.Resource.Resource != "secrets" {
					t.Errorf("Forbidden for %s", ev.Resource)
				}
			case ev.Type == Synced && ev.Resource.Resource == "configmaps":
				synced = true
			}
		case err := <-done:
			t.Fatalf("the run ended: %v", err)
		case <-deadline:
			t.Fatalf("forbidden %d, configmaps synced %v", forbidden, synced)
		}
	}
	// Past the grace a fatal forbiddance would have ended the run by now.
	select {
	case err := <-done:
		t.Fatalf("the run ended: %v", err)
	case <-time.After(forbiddanceGrace + time.Second):
	}
	cancel()
	for ev := range out {
		if ev.Type == Error && ev.Lifecycle.Reason == "Forbidden" {
			forbidden++
		}
	}
	if err := <-done; err != nil || forbidden != 1 {
		t.Errorf("run: %v; %d Forbidden lines, want one", err, forbidden)
	}
}

// An initial list the server refuses as a bad request (a --field-selector field it does not
// support) ends the run as a forbidden one does: no retry mends the user's error (issue #33: a
// 400 was retried forever and the run exited 0 at --timeout).
func TestBadRequestEndsTheRun(t *testing.T) {
	var got *ForbiddenError
	ri := &resourceInformer{res: podRes, cfg: Config{Namespace: "demo"}, out: make(chan Event, 10),
		forbidden: func(e *ForbiddenError) { got = e }}
	tp := &tap{ri: ri}
	tp.recordError(t.Context(), "list", apierrors.NewBadRequest("field label not supported: foo"), 0)
	if got == nil || !got.BadRequest {
		t.Fatalf("a 400 on the initial list: %+v, want it to end the run", got)
	}
	want := `cannot list pods in namespace "demo": Error from server (BadRequest): field label not supported: foo (check --field-selector and --selector)`
	if got.Error() != want {
		t.Errorf("error %q, want %q", got.Error(), want)
	}
}
