package recording

import (
	"bytes"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// builtinTypes are the Go types of every built-in kind (client-go's scheme), in a fixed order.
func builtinTypes() []reflect.Type {
	known := scheme.Scheme.AllKnownTypes()
	gvks := make([]schema.GroupVersionKind, 0, len(known))
	for gvk := range known {
		gvks = append(gvks, gvk)
	}
	slices.SortFunc(gvks, func(a, b schema.GroupVersionKind) int {
		if c := compareStrings(a.Group+"/"+a.Version, b.Group+"/"+b.Version); c != 0 {
			return c
		}
		return compareStrings(a.Kind, b.Kind)
	})
	types := make([]reflect.Type, len(gvks))
	for i, gvk := range gvks {
		types[i] = known[gvk]
	}
	return types
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// filled is a new object of type t filled at random from seed (the API machinery's fuzzer
// functions: valid times, raw extensions, object metadata; several map keys and elements).
func filled(t reflect.Type, seed int64) runtime.Object {
	f := fuzzer.FuzzerFor(metafuzzer.Funcs, rand.NewSource(seed), scheme.Codecs).NilChance(.3).NumElements(0, 3)
	o := reflect.New(t).Interface().(runtime.Object)
	f.Fill(o)
	return o
}

// checkSorted fails when the one-pass encoding of o is not the two passes' bytes. The one pass
// may give up (the two passes are taken then), never write other bytes.
func checkSorted(t *testing.T, o any) (onePass bool) {
	t.Helper()
	got, err := encodeSorted(o)
	if err != nil {
		return false
	}
	want, werr := encodeTwoPasses(o)
	if werr != nil {
		t.Fatalf("%T: the one pass encoded what the two passes refuse (%v):\n%s", o, werr, got)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%T: one pass differs from two at byte %d:\none: %s\ntwo: %s", o, i, got[max(0, i-80):min(len(got), i+80)], want[max(0, i-80):min(len(want), i+80)])
	}
	return true
}

// Every built-in kind, filled at random, encodes in one pass as in two.
func TestSortedEncoderBuiltins(t *testing.T) {
	types := builtinTypes()
	if len(types) < 300 {
		t.Fatalf("only %d built-in types", len(types))
	}
	onePass := 0
	for i, typ := range types {
		for seed := range int64(4) {
			if checkSorted(t, filled(typ, int64(i)*1000+seed)) {
				onePass++
			}
		}
	}
	// The pods, ConfigMaps and workloads the bench lists take the one pass.
	if onePass < len(types)*4*9/10 {
		t.Errorf("only %d of %d objects encoded in one pass", onePass, len(types)*4)
	}
	if !checkSorted(t, benchPod(t)) {
		t.Error("a kwok pod is not encoded in one pass")
	}
}

// What the one pass hands to encoding/json value by value, and the structs it cannot resolve.
func TestSortedEncoderFragments(t *testing.T) {
	type inner struct {
		B string `json:"b"`
		A int    `json:"a,omitempty"`
	}
	type Embedded struct {
		Z string `json:"z"`
		Y *inner `json:"y,omitempty"`
	}
	type dup struct { // the name "z" twice: encoding/json's dominance rules
		Embedded `json:",inline"`
		Z        string `json:"z"`
	}
	type quoted struct {
		N int `json:"n,string"`
	}
	type all struct {
		Embedded
		F32   float32            `json:"f32"`
		F64   float64            `json:"f64"`
		U     uint64             `json:"u"`
		Arr   [2]string          `json:"arr"`
		Iface any                `json:"iface"`
		Bytes []byte             `json:"bytes"`
		Map   map[string]any     `json:"map"`
		Raw   map[string][]byte  `json:"raw,omitempty"`
		Dup   dup                `json:"dup"`
		Q     quoted             `json:"q"`
		Inner map[string]inner   `json:"inner"`
		Ptrs  []*inner           `json:"ptrs"`
		HTML  string             `json:"<html> & ü\u2028"`
		Empty map[string]string  `json:"empty"`
		Nils  map[string]*string `json:"nils"`
		ZT    zeroer             `json:"zt,omitzero"`
		ZP    *zeroer            `json:"zp,omitempty,omitzero"`
		ZS    inner              `json:"zs,omitzero"`
		ZM    map[string]inner   `json:"zm,omitzero"`
		ZI    isZeroer           `json:"zi,omitzero"`
		ZX    string             `json:"zx,unknown"`
		Skip  string             `json:"-"`
		Dash  string             `json:"-,"` //nolint:staticcheck // encoding/json's way to name a member "-"
		plain string
	}
	seven := &zeroer{N: 7}
	values := []any{
		&all{},
		&all{ZT: zeroer{N: 7}, ZP: seven, ZI: seven, ZM: map[string]inner{}},
		&all{ZT: zeroer{N: 1}, ZP: &zeroer{}, ZS: inner{A: 1}, ZI: (*zeroer)(nil), ZX: "x"},
		&all{Embedded: Embedded{Z: "z", Y: &inner{B: "\x00\b\f\t\n\r\"\\ <>&\u2028\u2029\xff"}}, F32: 0.1, F64: 1e21, U: 1 << 63,
			Arr: [2]string{"a", "b"}, Iface: map[string]any{"z": 1, "a": []any{2.5, "x"}}, Bytes: []byte("bytes"),
			Map: map[string]any{"b": 1, "a": nil, "ü": true, "A": "x"}, Raw: map[string][]byte{"k": nil},
			Dup: dup{Embedded: Embedded{Z: "inner"}, Z: "outer"}, Q: quoted{N: 7},
			Inner: map[string]inner{"k": {B: "b", A: 1}}, Ptrs: []*inner{nil, {B: "x"}}, HTML: "v",
			Empty: map[string]string{}, Nils: map[string]*string{"n": nil}, Dash: "dash", plain: "p"},
	}
	for _, v := range values {
		if !checkSorted(t, v) {
			t.Errorf("%T not encoded in one pass", v)
		}
	}
}

// FuzzSortedEncoder compares the one pass with the two on built-in kinds filled from the fuzzed
// seed.
func FuzzSortedEncoder(f *testing.F) {
	types := builtinTypes()
	f.Add(int64(0), uint16(0))
	f.Add(int64(37), uint16(200))
	f.Fuzz(func(t *testing.T, seed int64, kind uint16) {
		checkSorted(t, filled(types[int(kind)%len(types)], seed))
	})
}

// zeroer is a type with an IsZero method, as metav1.Time (omitzero).
type zeroer struct{ N int }

func (z *zeroer) IsZero() bool { return z == nil || z.N == 7 }

// Objects whose managedFields repeat, or nearly (the remembered fieldsV1), each encode as in
// two passes, also across the cache's forgetting.
func TestSortedEncoderFieldsV1Remembered(t *testing.T) {
	pod := benchPod(t)
	for round := range 2 {
		for i := range fieldsCacheMax + 50 {
			p := pod.DeepCopy()
			for j := range p.ManagedFields {
				raw := fmt.Sprintf(`{"f:metadata":{"f:labels":{"f:n%d":{},"f:<a&b>":{}}},"f:spec":{"f:x":{}},"f:%d":{}}`, i%(fieldsCacheMax+10), j)
				if i%3 == 0 {
					raw = string(pod.ManagedFields[j].FieldsV1.GetRawBytes()) // the list's common ones
				}
				p.ManagedFields[j].FieldsV1 = metav1.NewFieldsV1(raw)
			}
			if !checkSorted(t, p) {
				t.Fatalf("round %d, pod %d: not encoded in one pass", round, i)
			}
		}
	}
	if n := len(fieldsCache.m); n > fieldsCacheMax {
		t.Errorf("%d fieldsV1 remembered, want at most %d", n, fieldsCacheMax)
	}
}
