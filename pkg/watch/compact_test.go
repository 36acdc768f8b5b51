package watch

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

var widgets = discovery.Resource{Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets", Namespaced: true}

// A typed list (items without apiVersion and kind, as the server sends built-in lists) and a
// custom resource's, with numbers of every sort, nested lists and empty maps.
const (
	cmItem = `{"metadata":{"name":"a","namespace":"ns","uid":"u-a","resourceVersion":"11",` +
		`"annotations":{"x":"1"},"labels":{},"managedFields":[{"manager":"m","operation":"Update","fieldsV1":{"f:data":{}}}]},` +
		`"data":{"k":"v","e":""},"binaryData":{}}`
	widgetItem = `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","uid":"u-w","resourceVersion":"12"},` +
		`"spec":{"int":3,"big":9007199254740993,"neg":-4,"float":1.5,"exp":1e3,"zero":0.0,"nested":[[1,2],[{"a":[]}],{}],"null":null,"t":true,"s":"\u00e9"}}`
	cmList = `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"20","continue":"next","remainingItemCount":5},"items":[` +
		cmItem + `,` + widgetItem + `]}`
	widgetList = `{"kind":"WidgetList","apiVersion":"example.com/v1","metadata":{"resourceVersion":"21"},"items":[` + widgetItem + `]}`
	watchBody  = `{"type":"ADDED","object":` + widgetItem + `}` + "\n" +
		`{"type":"MODIFIED","object":{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","resourceVersion":"13"},"spec":{"n":[1,2.5]}}}` + "\n" +
		`{"type":"BOOKMARK","object":{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"resourceVersion":"14","annotations":{"k8s.io/initial-events-end":"true","other":"dropped"}}}}` + "\n" +
		`{"type":"DELETED","object":{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","resourceVersion":"15"}}}` + "\n" +
		`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (15)","reason":"Expired","code":410}}` + "\n"
	forbidden = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"widgets is forbidden: User \"u\" cannot list resource","reason":"Forbidden","details":{"group":"example.com","kind":"widgets"},"code":403}`
)

// apiServer answers lists and watches of configmaps and widgets in namespace ns, and a
// forbidden list of widgets in namespace denied.
func apiServer(t *testing.T) *rest.Config {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasPrefix(r.URL.Path, "/apis/example.com/v1/namespaces/denied/"):
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(forbidden))
		case r.URL.Query().Get("watch") == "true":
			_, _ = w.Write([]byte(watchBody))
		case r.URL.Path == "/api/v1/namespaces/ns/configmaps":
			if r.URL.Query().Get("limit") != "2" || r.URL.Query().Get("continue") != "c" {
				t.Errorf("list options not sent: %s", r.URL.RawQuery)
			}
			_, _ = w.Write([]byte(cmList))
		case r.URL.Path == "/apis/example.com/v1/namespaces/ns/widgets":
			_, _ = w.Write([]byte(widgetList))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}
}

func compactListerFor(t *testing.T, cfg *rest.Config, res discovery.Resource, ns string) compactLister {
	t.Helper()
	l, err := newCompactLister(newTypedClients(cfg), res, ns)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The list decodes to compact objects with what the reflector and its pager read, and each
// object decodes to exactly what the dynamic client gives for the same bytes.
func TestCompactList(t *testing.T) {
	cfg := apiServer(t)
	ctx := context.Background()
	obj, err := compactListerFor(t, cfg, cms, "ns").List(ctx, metav1.ListOptions{Limit: 2, Continue: "c"})
	if err != nil {
		t.Fatal(err)
	}
	lm, err := meta.ListAccessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	if lm.GetResourceVersion() != "20" || lm.GetContinue() != "next" || lm.GetRemainingItemCount() == nil || *lm.GetRemainingItemCount() != 5 {
		t.Errorf("list meta: rv %q continue %q remaining %v", lm.GetResourceVersion(), lm.GetContinue(), lm.GetRemainingItemCount())
	}
	items, err := meta.ExtractList(obj)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want, err := dyn.Resource(cms.GVR()).Namespace("ns").List(ctx, metav1.ListOptions{Limit: 2, Continue: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || len(want.Items) != 2 {
		t.Fatalf("%d items, dynamic client %d", len(items), len(want.Items))
	}
	for i, o := range items {
		c, ok := o.(*compactObject)
		if !ok {
			t.Fatalf("item %d is %T", i, o)
		}
		a, err := meta.Accessor(o)
		if err != nil {
			t.Fatal(err)
		}
		w := &want.Items[i]
		if a.GetName() != w.GetName() || a.GetNamespace() != w.GetNamespace() || a.GetUID() != w.GetUID() ||
			a.GetResourceVersion() != w.GetResourceVersion() || len(a.GetAnnotations()) != 0 {
			t.Errorf("item %d meta %s/%s %s %s %v", i, a.GetNamespace(), a.GetName(), a.GetUID(), a.GetResourceVersion(), a.GetAnnotations())
		}
		if c.GroupVersionKind() != w.GroupVersionKind() {
			t.Errorf("item %d kind %v, dynamic client %v", i, c.GroupVersionKind(), w.GroupVersionKind())
		}
		got := toUnstructured(o)
		if !reflect.DeepEqual(got.Object, w.Object) {
			t.Errorf("item %d differs from the dynamic client's (-dynamic +compact):\n%s", i, cmp.Diff(w.Object, got.Object))
		}
		if key, err := cache.MetaNamespaceKeyFunc(o); err != nil || key != w.GetNamespace()+"/"+w.GetName() {
			t.Errorf("key %q %v", key, err)
		}
		if resourceVersionOf(o) != w.GetResourceVersion() {
			t.Errorf("resourceVersionOf %q", resourceVersionOf(o))
		}
	}
	// The numbers as the dynamic client has them: int64 and float64, never json.Number.
	spec := toUnstructured(items[1]).Object["spec"].(map[string]interface{})
	if _, ok := spec["big"].(int64); !ok {
		t.Errorf("big is %T", spec["big"])
	}
	if _, ok := spec["float"].(float64); !ok {
		t.Errorf("float is %T", spec["float"])
	}
}

// A refused list is the server's Status, as an API error the reflector and the tap recognise.
func TestCompactListForbidden(t *testing.T) {
	cfg := apiServer(t)
	_, err := compactListerFor(t, cfg, widgets, "denied").List(context.Background(), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("want a forbidden API error, got %T %v", err, err)
	}
	if !strings.Contains(err.Error(), `cannot list resource`) {
		t.Errorf("message lost: %v", err)
	}
}

// Every watch event type decodes: objects compact, the bookmark keeps the initial-events-end
// annotation (only it), the error is a metav1.Status the reflector turns into an API error.
func TestCompactWatch(t *testing.T) {
	cfg := apiServer(t)
	ctx := context.Background()
	w, err := compactListerFor(t, cfg, widgets, "ns").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dw, err := dyn.Resource(widgets.GVR()).Namespace("ns").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer dw.Stop()
	wantTypes := []watch.EventType{watch.Added, watch.Modified, watch.Bookmark, watch.Deleted, watch.Error}
	for i, wt := range wantTypes {
		ev := next(t, w)
		dev := next(t, dw)
		if ev.Type != wt || dev.Type != wt {
			t.Fatalf("event %d: %s (dynamic client %s), want %s", i, ev.Type, dev.Type, wt)
		}
		if wt == watch.Error {
			st, ok := ev.Object.(*metav1.Status)
			if !ok {
				t.Fatalf("error event holds %T", ev.Object)
			}
			if err := apierrors.FromObject(st); !apierrors.IsResourceExpired(err) {
				t.Errorf("error event: %v", err)
			}
			if !reflect.DeepEqual(st, dev.Object) {
				t.Errorf("status differs from the dynamic client's: %s", cmp.Diff(dev.Object, st))
			}
			continue
		}
		c, ok := ev.Object.(*compactObject)
		if !ok {
			t.Fatalf("event %d holds %T", i, ev.Object)
		}
		du := dev.Object.(*unstructured.Unstructured)
		if c.meta.ResourceVersion != du.GetResourceVersion() || c.meta.Name != du.GetName() || c.meta.Namespace != du.GetNamespace() {
			t.Errorf("event %d meta %+v", i, c.meta)
		}
		if wt == watch.Bookmark {
			a, _ := meta.Accessor(c)
			if got := a.GetAnnotations(); !reflect.DeepEqual(got, map[string]string{initialEventsEndAnnotation: "true"}) {
				t.Errorf("bookmark annotations %v", got)
			}
		}
		if got := toUnstructured(c); !reflect.DeepEqual(got.Object, du.Object) {
			t.Errorf("event %d differs from the dynamic client's: %s", i, cmp.Diff(du.Object, got.Object))
		}
	}
}

func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch ended early")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event")
	}
	return watch.Event{}
}

// A deep copy shares nothing with its original.
func TestCompactDeepCopy(t *testing.T) {
	c, err := compactFromJSON([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"1","annotations":{"k8s.io/initial-events-end":"true"}},"data":{"k":"v"}}`))
	if err != nil {
		t.Fatal(err)
	}
	orig := toUnstructured(c).Object
	cp := c.DeepCopyObject().(*compactObject)
	cp.raw[bytes.Index(cp.raw, []byte(`"v"`))+1] = 'w'
	cp.meta.Annotations[initialEventsEndAnnotation] = "false"
	cp.meta.Name = "b"
	cp.SetGroupVersionKind(schema.GroupVersionKind{Kind: "Other"})
	if !reflect.DeepEqual(toUnstructured(c).Object, orig) || c.meta.Annotations[initialEventsEndAnnotation] != "true" ||
		c.meta.Name != "a" || c.gvk.Kind != "ConfigMap" {
		t.Errorf("the copy changed the original: %+v", c)
	}
	if toUnstructured(cp).Object["data"].(map[string]interface{})["k"] != "w" {
		t.Errorf("the copy's bytes were not its own")
	}
	l := &compactList{Items: []*compactObject{c}}
	lc := l.DeepCopyObject().(*compactList)
	if lc.Items[0] == c {
		t.Errorf("list copy shares its items")
	}
}

// --drop-managed-fields applies to compact objects when they are decoded.
func TestCompactDropManagedFields(t *testing.T) {
	c, err := compactFromJSON([]byte(cmItem))
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedSlice(toUnstructured(c).Object, "metadata", "managedFields"); !found {
		t.Fatal("managedFields missing before the transform")
	}
	if _, err := dropManagedFieldsTransform(c); err != nil {
		t.Fatal(err)
	}
	u := toUnstructured(c)
	if _, found, _ := unstructured.NestedSlice(u.Object, "metadata", "managedFields"); found {
		t.Error("managedFields kept")
	}
	if u.GetName() != "a" || u.GetAnnotations()["x"] != "1" {
		t.Errorf("metadata lost: %v", u.Object["metadata"])
	}
}

// FuzzCompactJSON: no input makes the JSON decoder panic, and for every JSON object the
// metadata it keeps is what unstructured reads from the same bytes.
func FuzzCompactJSON(f *testing.F) {
	for _, s := range []string{cmItem, widgetItem, cmList, `{}`, `null`, `[]`, `{"metadata":null}`,
		`{"metadata":{"name":3,"namespace":"n"}}`, `{"metadata":{"annotations":{"k8s.io\/initial-events-end":"true"}}}`,
		`{"metadata":{"annotations":{"k8s.io/initial-events-end":"true","n":1}}}`, `{"Metadata":{"Name":"x"}}`,
		`{"kind":"Status","apiVersion":"v1","code":410}`, `{"metadata":{"name":"a","name":"b"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = compactJSONSerializer{}.Decode(data, nil, nil)
		_ = decodeCompactJSONList(data, &compactList{})
		c, err := compactFromJSON(bytes.Clone(data))
		var m map[string]interface{}
		if utiljson.Unmarshal(data, &m) != nil || m == nil {
			return
		}
		if err != nil {
			t.Fatalf("a JSON object refused: %v", err)
		}
		u := &unstructured.Unstructured{Object: m}
		want := &compactObject{}
		want.setMeta(u.GetName(), u.GetNamespace(), u.GetUID(), u.GetResourceVersion(), u.GetAnnotations())
		if !reflect.DeepEqual(c.meta, want.meta) {
			t.Errorf("metadata %+v, unstructured reads %+v", c.meta, want.meta)
		}
		if c.gvk != u.GroupVersionKind() {
			t.Errorf("kind %v, unstructured reads %v", c.gvk, u.GroupVersionKind())
		}
		if got := toUnstructured(c); !reflect.DeepEqual(got.Object, m) {
			t.Errorf("decoded %v, want %v", got.Object, m)
		}
	})
}
