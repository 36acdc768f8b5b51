package watch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

// Wire formats (--wire).
const (
	// WireAuto lists and watches the resources client-go's scheme knows (the built-in ones) in
	// protobuf, the others (custom resources) in JSON.
	WireAuto = "auto"
	// WireJSON lists and watches everything in JSON (compact objects, see compact.go).
	WireJSON = "json"
	// WireProtobuf is what a resource served in protobuf is said to use.
	WireProtobuf = "protobuf"
)

// Wires are the values of --wire.
var Wires = []string{WireAuto, WireJSON}

// protobufContentType is the Kubernetes protobuf media type.
const protobufContentType = runtime.ContentTypeProtobuf

// Protobuf reports whether res is served in protobuf under wire: a kind client-go's scheme
// knows (with its list kind), unless JSON is forced. --metadata-only has its own client.
func Protobuf(res discovery.Resource, wire string) bool {
	if wire == WireJSON {
		return false
	}
	gvk := res.GVK()
	return scheme.Scheme.Recognizes(gvk) && scheme.Scheme.Recognizes(gvk.GroupVersion().WithKind(gvk.Kind+"List"))
}

// wireOf is the wire format of res in this run, as the Informer line says it: the metadata
// client (--metadata-only) always speaks protobuf.
func (cfg *Config) wireOf(res discovery.Resource) string {
	if cfg.Metadata != nil || (cfg.REST != nil && Protobuf(res, cfg.Wire)) {
		return WireProtobuf
	}
	return WireJSON
}

// typedClients builds one REST client per group/version and wire (protobuf for built-in
// resources, compact JSON for the others), over one HTTP client (one connection pool, as the
// dynamic client has).
type typedClients struct {
	base *rest.Config

	mu      sync.Mutex
	http    *http.Client
	clients map[clientKey]rest.Interface
}

type clientKey struct {
	gv       schema.GroupVersion
	protobuf bool
}

func newTypedClients(base *rest.Config) *typedClients {
	return &typedClients{base: base, clients: map[clientKey]rest.Interface{}}
}

// forGroupVersion returns the REST client of gv: protobuf, or JSON decoded to compact objects.
func (t *typedClients) forGroupVersion(gv schema.GroupVersion, protobuf bool) (rest.Interface, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := clientKey{gv: gv, protobuf: protobuf}
	if c, ok := t.clients[key]; ok {
		return c, nil
	}
	cfg := rest.CopyConfig(t.base)
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	if gv.Group == "" {
		cfg.APIPath = "/api"
	}
	if protobuf {
		cfg.ContentType = protobufContentType
		cfg.AcceptContentTypes = protobufContentType + "," + runtime.ContentTypeJSON
		// Decoded as sent: no conversion, no defaulting (the objects are the server's); the
		// objects of watch events kept compact (compact_protobuf.go).
		cfg.NegotiatedSerializer = compactProtobufCodecs{scheme.Codecs.WithoutConversion()}
	} else {
		cfg.ContentType = runtime.ContentTypeJSON
		cfg.AcceptContentTypes = runtime.ContentTypeJSON
		cfg.NegotiatedSerializer = compactJSONCodecs{}
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	if t.http == nil {
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return nil, err
		}
		t.http = hc
	}
	c, err := rest.RESTClientForConfigAndClient(cfg, t.http)
	if err != nil {
		return nil, err
	}
	t.clients[key] = c
	return c, nil
}

// typedLister lists and watches one built-in resource in protobuf, as client-go's typed clients
// do, and hands the reflector compact objects (compact.go): each object's protobuf message as the
// server sent it, cut out of the list or the watch event with its metadata read field by field
// (compact_protobuf.go), never decoded to its Go type here; with its apiVersion and kind
// (protobuf lists leave them empty).
type typedLister struct {
	client   rest.Interface
	resource string
	ns       string
	gvk      schema.GroupVersionKind
}

func newTypedLister(clients *typedClients, res discovery.Resource, ns string) (typedLister, error) {
	c, err := clients.forGroupVersion(res.GVR().GroupVersion(), true)
	if err != nil {
		return typedLister{}, fmt.Errorf("protobuf client for %s: %w", res, err)
	}
	return typedLister{client: c, resource: res.Resource, ns: ns, gvk: res.GVK()}, nil
}

func (l typedLister) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	listGVK := l.gvk.GroupVersion().WithKind(l.gvk.Kind + "List")
	res := l.client.Get().NamespaceIfScoped(l.ns, l.ns != "").Resource(l.resource).
		VersionedParams(&opts, scheme.ParameterCodec).Timeout(timeoutOf(opts)).Do(ctx)
	if err := res.Error(); err != nil {
		return nil, err
	}
	// Protobuf, as asked: each item's bytes cut out of the body, none decoded.
	body, _ := res.Raw()
	if out, err := compactProtobufList(body, listGVK, l.gvk); !errors.Is(err, errNotProtobuf) {
		return out, err
	}
	// Another encoding (JSON from a server without protobuf): decoded, then kept re-encoded.
	list, err := scheme.Scheme.New(listGVK)
	if err != nil {
		return nil, err
	}
	if err := res.Into(list); err != nil {
		return nil, err
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	out := &compactList{TypeMeta: metav1.TypeMeta{APIVersion: listGVK.GroupVersion().String(), Kind: listGVK.Kind},
		ListMeta: metav1.ListMeta{ResourceVersion: lm.GetResourceVersion(), Continue: lm.GetContinue(),
			RemainingItemCount: lm.GetRemainingItemCount()}}
	itemsPtr, err := meta.GetItemsPtr(list)
	if err != nil {
		return nil, err
	}
	items := reflect.ValueOf(itemsPtr).Elem()
	out.Items = make([]*compactObject, 0, items.Len())
	for i := range items.Len() {
		it := items.Index(i)
		o, ok := it.Addr().Interface().(runtime.Object)
		if !ok {
			return nil, fmt.Errorf("%s holds %s items", listGVK.Kind, it.Type())
		}
		c, err := compactTyped(o, l.gvk)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, c)
		// The decoded item is garbage now: let it go before the next is encoded.
		it.SetZero()
	}
	return out, nil
}

func (l typedLister) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	w, err := l.client.Get().NamespaceIfScoped(l.ns, l.ns != "").Resource(l.resource).
		VersionedParams(&opts, scheme.ParameterCodec).Timeout(timeoutOf(opts)).Watch(ctx)
	if err != nil {
		return nil, err
	}
	gvk := l.gvk
	return newMappedWatch(w, func(ev watch.Event) (watch.Event, bool) {
		if ev.Type == watch.Error || ev.Object == nil {
			return ev, true
		}
		// The tap packs each object (tapWatcher.observe), after the list's preparer read it
		// when it is one of an initial streaming list's (listprep.go).
		if c, ok := ev.Object.(*compactObject); ok {
			c.gvk = gvk
			c.packLater = true
			return ev, true
		}
		c, err := compactTyped(ev.Object, gvk)
		if err != nil {
			return watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus}, true
		}
		c.packLater = true
		ev.Object = c
		return ev, true
	}), nil
}

// compactTyped keeps a decoded built-in object as its protobuf message and its metadata.
func compactTyped(o runtime.Object, gvk schema.GroupVersionKind) (*compactObject, error) {
	pm, ok := o.(interface{ Marshal() ([]byte, error) })
	if !ok {
		return nil, fmt.Errorf("%T has no protobuf encoding", o)
	}
	a, err := meta.Accessor(o)
	if err != nil {
		return nil, err
	}
	raw, err := pm.Marshal()
	if err != nil {
		return nil, err
	}
	c := &compactObject{raw: raw, codec: compactProtobuf, gvk: gvk}
	c.setMeta(a.GetName(), a.GetNamespace(), a.GetUID(), a.GetResourceVersion(), a.GetAnnotations())
	return c, nil
}

// toUnstructured returns a cached object in the form events carry: a compact object decoded
// (for the line that needs it; the cache keeps the compact object), an unstructured one itself,
// a typed one converted.
func toUnstructured(o interface{}) *unstructured.Unstructured {
	var u *unstructured.Unstructured
	var err error
	switch v := o.(type) {
	case nil:
		return nil
	case *unstructured.Unstructured:
		return v
	case *compactObject:
		u, err = v.decode()
	case runtime.Object:
		var m map[string]interface{}
		m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(v)
		u = &unstructured.Unstructured{Object: m}
	default:
		return nil
	}
	if err != nil {
		// Never lose the line: keep what identifies the object (a compact object's kept
		// metadata, or a typed object's, through meta.Accessor alike).
		obj := o.(runtime.Object)
		u = &unstructured.Unstructured{Object: map[string]interface{}{}}
		u.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
		if a, err := meta.Accessor(obj); err == nil {
			u.SetNamespace(a.GetNamespace())
			u.SetName(a.GetName())
			u.SetResourceVersion(a.GetResourceVersion())
		}
	}
	return u
}

// resourceVersionOf is a cached object's resourceVersion, compact, typed or not.
func resourceVersionOf(o interface{}) string {
	if c, ok := o.(*compactObject); ok {
		return c.meta.ResourceVersion
	}
	if a, err := meta.Accessor(o); err == nil {
		return a.GetResourceVersion()
	}
	return ""
}
