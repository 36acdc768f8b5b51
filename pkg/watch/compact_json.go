package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	jsonserializer "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	sigsjson "sigs.k8s.io/json"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

// The JSON side of the compact cache: an object's metadata is read from its JSON head (the rest
// skipped), its bytes kept as sent; compactJSONCodecs hands the JSON clients' reflectors compact
// objects and lists, and compactLister lists and watches through them.

// jsonHead is the part of an object or list the JSON decoder reads; the rest is skipped.
type jsonHead struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name               string          `json:"name"`
		Namespace          string          `json:"namespace"`
		UID                types.UID       `json:"uid"`
		ResourceVersion    string          `json:"resourceVersion"`
		Annotations        json.RawMessage `json:"annotations"`
		Continue           string          `json:"continue"`
		RemainingItemCount *int64          `json:"remainingItemCount"`
	} `json:"metadata"`
}

// jsonListItems is a list's items, each kept as sent.
type jsonListItems struct {
	Items []json.RawMessage `json:"items"`
}

// mayHoldBookmark says whether annotations (JSON) may hold the initial-events-end one: a
// quick look, so that only bookmarks (and the rare escaped key) have their annotations parsed.
func mayHoldBookmark(raw json.RawMessage) bool {
	return bytes.Contains(raw, []byte("initial-events-end")) || bytes.IndexByte(raw, '\\') >= 0
}

// compactFromJSON makes a compact object of one JSON object, keeping data itself (the caller
// gives it away). The metadata is read as unstructured would read it: case-sensitive keys, and
// a field of an unexpected type read as absent.
func compactFromJSON(data []byte) (*compactObject, error) {
	var h jsonHead
	c := &compactObject{raw: data, codec: compactJSON}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &h); err == nil {
		var ann map[string]string
		if len(h.Metadata.Annotations) > 0 && mayHoldBookmark(h.Metadata.Annotations) {
			if err := sigsjson.UnmarshalCaseSensitivePreserveInts(h.Metadata.Annotations, &ann); err != nil {
				return compactFromJSONSlow(data)
			}
		}
		c.gvk = schema.FromAPIVersionAndKind(h.APIVersion, h.Kind)
		c.setMeta(h.Metadata.Name, h.Metadata.Namespace, h.Metadata.UID, h.Metadata.ResourceVersion, ann)
		return c, nil
	}
	return compactFromJSONSlow(data)
}

// decodeJSONObject decodes one JSON object as the dynamic client does (unstructured's JSON
// scheme): int64 and float64 numbers.
func decodeJSONObject(raw []byte) (map[string]interface{}, error) {
	var m map[string]interface{}
	if err := utiljson.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("null object")
	}
	return m, nil
}

// compactFromJSONSlow reads the metadata of an object whose fields have unexpected types (a
// server never sends one) the way unstructured does.
func compactFromJSONSlow(data []byte) (*compactObject, error) {
	var m map[string]interface{}
	if err := utiljson.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("null object")
	}
	u := &unstructured.Unstructured{Object: m}
	c := &compactObject{raw: data, codec: compactJSON, gvk: u.GroupVersionKind()}
	c.setMeta(u.GetName(), u.GetNamespace(), u.GetUID(), u.GetResourceVersion(), u.GetAnnotations())
	return c, nil
}

// decodeCompactJSONList decodes a JSON list: its metadata, and each item as a compact object
// (items without apiVersion and kind, as typed lists send them, take the list's).
func decodeCompactJSONList(data []byte, into *compactList) error {
	var h jsonHead
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &h); err != nil {
		return err
	}
	var items jsonListItems
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &items); err != nil {
		return err
	}
	into.APIVersion, into.Kind = h.APIVersion, h.Kind
	into.ListMeta = metav1.ListMeta{ResourceVersion: h.Metadata.ResourceVersion, Continue: h.Metadata.Continue,
		RemainingItemCount: h.Metadata.RemainingItemCount}
	itemGVK := schema.FromAPIVersionAndKind(h.APIVersion, trimListSuffix(h.Kind))
	into.Items = make([]*compactObject, 0, len(items.Items))
	for _, raw := range items.Items {
		// json.RawMessage copies what it holds: each item owns its bytes.
		c, err := compactFromJSON(raw)
		if err != nil {
			return err
		}
		if c.gvk.Kind == "" && c.gvk.GroupVersion().Empty() {
			c.gvk = itemGVK
		}
		c.pack()
		into.Items = append(into.Items, c)
	}
	return nil
}

func trimListSuffix(kind string) string {
	if n := len(kind) - len("List"); n >= 0 && kind[n:] == "List" {
		return kind[:n]
	}
	return kind
}

// isStatus says whether gvk is a metav1.Status, as servers send errors.
func isStatus(gvk schema.GroupVersionKind) bool {
	return gvk.Kind == "Status" && gvk.Group == "" && (gvk.Version == "v1" || gvk.Version == "")
}

// compactJSONSerializer decodes JSON objects to compactObject, lists to compactList and Status
// to metav1.Status (what client-go reads errors from). It encodes only what a GET needs.
type compactJSONSerializer struct{}

var _ runtime.Serializer = compactJSONSerializer{}

func (compactJSONSerializer) Identifier() runtime.Identifier {
	return "kubectl-informer-compact-json"
}

func (compactJSONSerializer) Encode(obj runtime.Object, w io.Writer) error {
	if c, ok := obj.(*compactObject); ok && c.codec == compactJSON {
		raw, done, err := c.bytes()
		if err != nil {
			return err
		}
		defer done()
		_, err = w.Write(raw)
		return err
	}
	return json.NewEncoder(w).Encode(obj)
}

func (compactJSONSerializer) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	switch into := into.(type) {
	case *compactList:
		if err := decodeCompactJSONList(data, into); err != nil {
			return nil, nil, err
		}
		if isStatus(into.GroupVersionKind()) {
			// An error sent in place of the list.
			st := &metav1.Status{}
			if err := utiljson.Unmarshal(data, st); err != nil {
				return nil, nil, err
			}
			gvk := st.GroupVersionKind()
			return st, &gvk, nil
		}
		gvk := into.GroupVersionKind()
		return into, &gvk, nil
	case *metav1.Status:
		var h jsonHead
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &h); err != nil {
			return nil, nil, err
		}
		if h.Kind != "" && h.Kind != "Status" {
			return nil, nil, fmt.Errorf("%s is not a Status", h.Kind)
		}
		if err := utiljson.Unmarshal(data, into); err != nil {
			return nil, nil, err
		}
		gvk := metav1.SchemeGroupVersion.WithKind("Status")
		return into, &gvk, nil
	}
	// The object aliases data (the decoder's buffer) until packOrOwn below.
	c, err := compactFromJSON(data)
	if err != nil {
		return nil, nil, err
	}
	if c.gvk.Kind == "" && defaults != nil {
		c.gvk.Kind = defaults.Kind
	}
	if c.gvk.Kind == "" {
		return nil, nil, runtime.NewMissingKindErr(string(data))
	}
	if isStatus(c.gvk) {
		st := &metav1.Status{}
		if err := utiljson.Unmarshal(data, st); err != nil {
			return nil, nil, err
		}
		return st, &c.gvk, nil
	}
	c.packOrOwn()
	return c, &c.gvk, nil
}

// watchEventScheme knows metav1.WatchEvent, the envelope of watch events, as the dynamic
// client's does.
var watchEventScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}()

// compactJSONCodecs is the NegotiatedSerializer of the compact JSON clients: JSON only, the
// watch envelope decoded as usual, the objects by compactJSONSerializer.
type compactJSONCodecs struct{}

func (compactJSONCodecs) SupportedMediaTypes() []runtime.SerializerInfo {
	return []runtime.SerializerInfo{{
		MediaType:        runtime.ContentTypeJSON,
		MediaTypeType:    "application",
		MediaTypeSubType: "json",
		EncodesAsText:    true,
		Serializer:       compactJSONSerializer{},
		StreamSerializer: &runtime.StreamSerializerInfo{
			EncodesAsText: true,
			Serializer: jsonserializer.NewSerializerWithOptions(jsonserializer.DefaultMetaFactory,
				watchEventScheme, watchEventScheme, jsonserializer.SerializerOptions{}),
			Framer: jsonserializer.Framer,
		},
	}}
}

func (compactJSONCodecs) EncoderForVersion(e runtime.Encoder, _ runtime.GroupVersioner) runtime.Encoder {
	return e
}

func (compactJSONCodecs) DecoderToVersion(d runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return d
}

// compactLister lists and watches one resource in JSON, handing the reflector compact objects.
type compactLister struct {
	client   rest.Interface
	resource string
	ns       string
}

func newCompactLister(clients *typedClients, res discovery.Resource, ns string) (compactLister, error) {
	c, err := clients.forGroupVersion(res.GVR().GroupVersion(), false)
	if err != nil {
		return compactLister{}, fmt.Errorf("JSON client for %s: %w", res, err)
	}
	return compactLister{client: c, resource: res.Resource, ns: ns}, nil
}

// listOptionsVersion is the version list options are encoded in, as the dynamic client does.
var listOptionsVersion = schema.GroupVersion{Version: "v1"}

func timeoutOf(opts metav1.ListOptions) time.Duration {
	if opts.TimeoutSeconds != nil {
		return time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	return 0
}

func (l compactLister) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	list := &compactList{}
	err := l.client.Get().NamespaceIfScoped(l.ns, l.ns != "").Resource(l.resource).
		SpecificallyVersionedParams(&opts, scheme.ParameterCodec, listOptionsVersion).
		Timeout(timeoutOf(opts)).Do(ctx).Into(list)
	if err != nil {
		return nil, err
	}
	return list, nil
}

func (l compactLister) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return l.client.Get().NamespaceIfScoped(l.ns, l.ns != "").Resource(l.resource).
		SpecificallyVersionedParams(&opts, scheme.ParameterCodec, listOptionsVersion).
		Timeout(timeoutOf(opts)).Watch(ctx)
}
