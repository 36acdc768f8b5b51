package watch

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The protobuf side of the compact cache: a built-in object's bytes are kept as the server sent
// them, cut out of the list or the watch event, and only its metadata is read, field by field,
// so that no object is decoded to its Go type until a line needs it. Every Kubernetes object
// message has its ObjectMeta as field 1; every list message its ListMeta as field 1 and its items
// as field 2 (k8s.io/api's generated.proto).

// protobufMagic starts every Kubernetes protobuf body: a runtime.Unknown envelope follows.
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

var errNotProtobuf = errors.New("not a Kubernetes protobuf envelope")

// protoFields calls fn for each field of a protobuf message, with the payload of length-delimited
// ones (nil for the others).
func protoFields(b []byte, fn func(num protowire.Number, v []byte)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		if typ == protowire.BytesType {
			v, n = protowire.ConsumeBytes(b)
		} else {
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ == protowire.BytesType {
			fn(num, v)
		}
	}
	return nil
}

// unknownOf opens a protobuf envelope (the magic, then runtime.Unknown): the object's apiVersion,
// kind and message, which aliases data.
func unknownOf(data []byte) (apiVersion, kind string, raw []byte, err error) {
	if !bytes.HasPrefix(data, protobufMagic) {
		return "", "", nil, errNotProtobuf
	}
	var encoding []byte
	err = protoFields(data[len(protobufMagic):], func(num protowire.Number, v []byte) {
		switch num {
		case 1: // typeMeta
			_ = protoFields(v, func(num protowire.Number, v []byte) {
				switch num {
				case 1:
					apiVersion = string(v)
				case 2:
					kind = string(v)
				}
			})
		case 2:
			raw = v
		case 3:
			encoding = v
		}
	})
	if err == nil && len(encoding) > 0 {
		err = fmt.Errorf("protobuf content encoding %q", encoding)
	}
	return apiVersion, kind, raw, err
}

// compactFromProtobuf makes a compact object of one object message, keeping raw itself (the
// caller gives it away): the metadata is read from the message's ObjectMeta, nothing else.
func compactFromProtobuf(raw []byte, gvk schema.GroupVersionKind) (*compactObject, error) {
	// The name, namespace, uid and resourceVersion, aliasing raw until they are copied out
	// together: one allocation for the four strings (20,000 objects: ~1 MB less than four).
	var name, namespace, uid, rv []byte
	var ann map[string]string
	var inner error
	err := protoFields(raw, func(num protowire.Number, v []byte) {
		if num != 1 {
			return
		}
		if err := protoFields(v, func(num protowire.Number, v []byte) {
			switch num {
			case 1:
				name = v
			case 3:
				namespace = v
			case 5:
				uid = v
			case 6:
				rv = v
			case 12: // an annotation: a map entry, key 1, value 2
				var k, val []byte
				if err := protoFields(v, func(num protowire.Number, v []byte) {
					switch num {
					case 1:
						k = v
					case 2:
						val = v
					}
				}); err != nil {
					inner = err
				}
				if string(k) == initialEventsEndAnnotation {
					ann = map[string]string{initialEventsEndAnnotation: string(val)}
				}
			}
		}); err != nil {
			inner = err
		}
	})
	if err == nil {
		err = inner
	}
	if err != nil {
		return nil, fmt.Errorf("protobuf %s: %w", gvk.Kind, err)
	}
	var b strings.Builder
	b.Grow(len(name) + len(namespace) + len(uid) + len(rv))
	for _, f := range [][]byte{name, namespace, uid, rv} {
		b.Write(f)
	}
	all := b.String()
	n1 := len(name)
	n2 := n1 + len(namespace)
	n3 := n2 + len(uid)
	c := &compactObject{raw: raw, codec: compactProtobuf, gvk: gvk}
	c.setMeta(all[:n1], all[n1:n2], types.UID(all[n2:n3]), all[n3:], ann)
	return c, nil
}

// compactProtobufList cuts a protobuf list body into compact objects of kind gvk, each owning a
// copy of its bytes. It returns errNotProtobuf for another encoding.
func compactProtobufList(body []byte, listGVK, gvk schema.GroupVersionKind) (*compactList, error) {
	_, _, raw, err := unknownOf(body)
	if err != nil {
		return nil, err
	}
	out := &compactList{TypeMeta: metav1.TypeMeta{APIVersion: listGVK.GroupVersion().String(), Kind: listGVK.Kind}}
	var inner error
	err = protoFields(raw, func(num protowire.Number, v []byte) {
		if inner != nil {
			return
		}
		switch num {
		case 1:
			inner = out.ListMeta.Unmarshal(v)
		case 2:
			var c *compactObject
			// c aliases the body until packOrOwn: a packed item needs no copy of its bytes.
			if c, inner = compactFromProtobuf(v, gvk); inner == nil {
				c.packOrOwn()
				out.Items = append(out.Items, c)
			}
		}
	})
	if err == nil {
		err = inner
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// compactProtobufCodecs is client-go's protobuf NegotiatedSerializer whose decoder hands out
// compact objects for the objects of watch events (decoded without a target); lists, Status
// errors and JSON answers decode as before.
type compactProtobufCodecs struct{ runtime.NegotiatedSerializer }

func (c compactProtobufCodecs) DecoderToVersion(d runtime.Decoder, gv runtime.GroupVersioner) runtime.Decoder {
	return compactProtobufDecoder{c.NegotiatedSerializer.DecoderToVersion(d, gv)}
}

type compactProtobufDecoder struct{ runtime.Decoder }

func (d compactProtobufDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if into == nil {
		if apiVersion, kind, raw, err := unknownOf(data); err == nil && kind != "" && kind != "Status" {
			gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
			// The object keeps its bytes where they are, not a copy: client-go's decoders hand
			// this decoder a buffer of the object's own that nothing else holds or writes (a
			// watch event's object bytes, copied out of the frame by RawExtension.Unmarshal, the
			// WatchEvent dropped; a response body read whole). Copying them again was 15% of
			// what a pod's initial list allocated. TestTypedListerWatchKeepsEachObjectsBytes
			// fails if a client-go update ever reuses that buffer.
			c, err := compactFromProtobuf(raw[:len(raw):len(raw)], gvk)
			if err != nil {
				return nil, nil, err
			}
			return c, &gvk, nil
		}
	}
	return d.Decoder.Decode(data, defaults, into)
}

// withoutManagedFields appends to dst the object message raw with its metadata (field 1)
// re-encoded without its managedFields (ObjectMeta's field 17), every other field as it is. It
// returns false, and dst as it was, when raw does not parse.
func withoutManagedFields(dst, raw []byte) ([]byte, bool) { return cutForRead(dst, raw, nil) }

// cutForRead is withoutManagedFields that also cuts what c leaves out of the metadata and the
// spec (nil: managedFields only).
func cutForRead(dst, raw []byte, c *readCut) ([]byte, bool) {
	start := len(dst)
	metaNum := protowire.Number(1)
	if c != nil {
		metaNum = c.meta
	}
	for b := raw; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return dst[:start], false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return dst[:start], false
		}
		field := b[:n+m]
		b = b[n+m:]
		var ok bool
		switch {
		case typ != protowire.BytesType:
			dst = append(dst, field...)
			continue
		case num == metaNum:
			md, _ := protowire.ConsumeBytes(field[n:])
			dst, ok = cutMessage(dst, num, md, c.keepsMeta, nil)
		case c != nil && c.spec != 0 && num == c.spec:
			spec, _ := protowire.ConsumeBytes(field[n:])
			dst, ok = cutMessage(dst, num, spec, c.keepsSpec, c.counted)
		default:
			dst = append(dst, field...)
			continue
		}
		if !ok {
			return dst[:start], false
		}
	}
	return dst, true
}

// protoEach calls fn with each field of a protobuf message as encoded, tag included.
func protoEach(b []byte, fn func(num protowire.Number, field []byte)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		fn(num, b[:n+m])
		b = b[n+m:]
	}
	return nil
}
