package printer

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// hostile is what a crafted recording puts in a string: OSC 52 (the clipboard), a window title,
// clear-screen, a carriage return.
const hostile = "x\x1b]52;c;cHduZWQ=\x07\x1b]0;TITLE\x07\x1b[2J\x1b[H\rfake\u009b"

// fillStrings sets every string reachable from v (nested structs, pointers to them, one element
// of each slice and map) to hostile.
func fillStrings(v reflect.Value, depth int) {
	if depth > 6 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(hostile)
		}
	case reflect.Pointer:
		if v.IsNil() && v.CanSet() && v.Type().Elem().Kind() == reflect.Struct && v.Type().Elem().PkgPath() != "" &&
			!strings.Contains(v.Type().Elem().PkgPath(), "k8s.io") {
			v.Set(reflect.New(v.Type().Elem()))
		}
		if !v.IsNil() {
			fillStrings(v.Elem(), depth+1)
		}
	case reflect.Struct:
		if strings.HasPrefix(v.Type().PkgPath(), "time") {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fillStrings(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		if v.CanSet() && v.Len() == 0 && v.Type().Elem().Kind() != reflect.Uint8 {
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		}
		for i := 0; i < v.Len(); i++ {
			fillStrings(v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.CanSet() && v.IsNil() && v.Type().Key().Kind() == reflect.String && v.Type().Elem().Kind() == reflect.String {
			m := reflect.MakeMap(v.Type())
			m.SetMapIndex(reflect.ValueOf(hostile).Convert(v.Type().Key()), reflect.ValueOf(hostile).Convert(v.Type().Elem()))
			v.Set(m)
		}
	}
}

// B3: every string of every line type of a recording, made hostile, reaches a terminal escaped
// (a replayed recording is a file from someone else: Error.verb was once printed raw).
func TestHostileEveryFieldHuman(t *testing.T) {
	types := []watch.Type{watch.Added, watch.Updated, watch.Deleted, watch.Informer, watch.List, watch.Watch,
		watch.WatchClosed, watch.Bookmark, watch.Synced, watch.Resync, watch.Relist, watch.Error, watch.Reconciled,
		watch.Dropped, watch.Recovered, watch.ControllerQueue, watch.KubeEvent, watch.HotLoop, watch.HotLoopEnded,
		watch.Folded, watch.ApiStats, watch.Throttled}
	for _, typ := range types {
		ev := watch.Event{}
		fillStrings(reflect.ValueOf(&ev).Elem(), 0)
		ev.Type, ev.Time = typ, t0
		ev.Obj.Object, ev.Obj.OldObject = nil, nil
		for _, opts := range []Options{{}, {ShowBookmarks: true, ShowReconciles: true, ShowAPIStats: true, QueueColumn: true, Color: true}} {
			var buf bytes.Buffer
			p := New(&buf, opts)
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s: panic %v", typ, r)
					}
				}()
				if err := p.Print(&ev); err != nil {
					t.Errorf("%s: %v", typ, err)
				}
				_ = p.Flush()
			}()
			out := strings.NewReplacer(colorReset, "", colorRed, "", colorGreen, "", colorYellow, "", colorBlue, "",
				colorMagent, "", colorCyan, "", colorDim, "").Replace(strings.TrimSuffix(buf.String(), "\n"))
			if i := strings.IndexAny(out, "\x1b\x07\r\n\u009b"); i >= 0 {
				t.Errorf("%s (color %v): raw control byte in %q", typ, opts.Color, out[max(0, i-60):min(len(out), i+20)])
			}
		}
	}
}

// L1: a cluster-scoped watch's header does not name the namespace -n (or the kubeconfig) gave.
func TestHeaderClusterScoped(t *testing.T) {
	cr := discovery.Resource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles", Kind: "ClusterRole"}
	ev := watch.Event{Type: watch.Informer, Time: t0, Lifecycle: watch.LifecycleInfo{Info: &watch.InformerInfo{Namespace: "default", Resources: []discovery.Resource{cr}}}}
	var buf bytes.Buffer
	p := New(&buf, Options{})
	if err := p.Print(&ev); err != nil {
		t.Fatal(err)
	}
	_ = p.Flush()
	if out := buf.String(); strings.Contains(out, "namespace default") || !strings.Contains(out, "in the cluster (cluster-scoped)") {
		t.Errorf("header: %q", out)
	}
}
