package watch

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

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
		// Decoded as sent: no conversion, no defaulting (the objects are the server's).
		cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
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
// do. Objects stay typed (the informer's cache keeps them so, far smaller than unstructured
// maps); their apiVersion and kind are set, as protobuf lists and the decoder leave them empty.
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

// example is an empty object of the resource's type, for the reflector's type check.
func (l typedLister) example() (runtime.Object, error) {
	return scheme.Scheme.New(l.gvk)
}

func (l typedLister) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	list, err := scheme.Scheme.New(l.gvk.GroupVersion().WithKind(l.gvk.Kind + "List"))
	if err != nil {
		return nil, err
	}
	var timeout time.Duration
	if opts.TimeoutSeconds != nil {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	err = l.client.Get().NamespaceIfScoped(l.ns, l.ns != "").Resource(l.resource).
		VersionedParams(&opts, scheme.ParameterCodec).Timeout(timeout).Do(ctx).Into(list)
	if err != nil {
		return nil, err
	}
	list.GetObjectKind().SetGroupVersionKind(l.gvk.GroupVersion().WithKind(l.gvk.Kind + "List"))
	err = meta.EachListItem(list, func(o runtime.Object) error {
		o.GetObjectKind().SetGroupVersionKind(l.gvk)
		return nil
	})
	return list, err
}

func (l typedLister) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	var timeout time.Duration
	if opts.TimeoutSeconds != nil {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	opts.Watch = true
	w, err := l.client.Get().NamespaceIfScoped(l.ns, l.ns != "").Resource(l.resource).
		VersionedParams(&opts, scheme.ParameterCodec).Timeout(timeout).Watch(ctx)
	if err != nil {
		return nil, err
	}
	gvk := l.gvk
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		if ev.Type != watch.Error && ev.Object != nil {
			ev.Object.GetObjectKind().SetGroupVersionKind(gvk)
		}
		return ev, true
	}), nil
}

// toUnstructured returns a cached object in the form events carry: the object itself on the
// JSON path, a conversion of the typed object on the protobuf path (made for the line that needs
// it; the cache keeps the typed object).
func toUnstructured(o interface{}) *unstructured.Unstructured {
	switch v := o.(type) {
	case nil:
		return nil
	case *unstructured.Unstructured:
		return v
	case *compactObject:
		u, err := v.decode()
		if err != nil {
			// Never lose the line: keep what identifies the object.
			u = &unstructured.Unstructured{Object: map[string]interface{}{}}
			u.SetGroupVersionKind(v.gvk)
			u.SetNamespace(v.meta.Namespace)
			u.SetName(v.meta.Name)
			u.SetResourceVersion(v.meta.ResourceVersion)
		}
		return u
	case runtime.Object:
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
		if err != nil {
			// Never lose the line: keep what identifies the object.
			u := &unstructured.Unstructured{Object: map[string]interface{}{}}
			u.GetObjectKind().SetGroupVersionKind(v.GetObjectKind().GroupVersionKind())
			if a, err := meta.Accessor(v); err == nil {
				u.SetNamespace(a.GetNamespace())
				u.SetName(a.GetName())
				u.SetResourceVersion(a.GetResourceVersion())
			}
			return u
		}
		return &unstructured.Unstructured{Object: m}
	}
	return nil
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
