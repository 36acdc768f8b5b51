package watch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// pbKey is the table key of a kind's protobuf bytes.
func pbKey(gvk schema.GroupVersionKind) packKey { return packKey{gvk: gvk, codec: compactProtobuf} }

// packKind is a kind of its own for a test: tables are per kind and per process.
func packKind(t *testing.T) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "pack.test", Version: "v1", Kind: strings.ReplaceAll(t.Name(), "/", "_")}
}

func letters(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(rng.IntN(26))
	}
	return b
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// trainPack feeds a kind letters until its table is built; the objects before are kept as
// they are.
func trainPack(t *testing.T, gvk schema.GroupVersionKind, rng *rand.Rand) {
	t.Helper()
	for n := 0; packTableFor(pbKey(gvk)).coder.Load() == nil; n++ {
		raw := letters(rng, 1024)
		if out, packed := pack(pbKey(gvk), raw); packed || !bytes.Equal(out, raw) {
			t.Fatalf("object %d packed before the kind's table was built", n)
		}
		if n > packTrainBytes/1024 {
			t.Fatalf("no table after %d objects of letters", n)
		}
	}
}

func TestPackRoundTrip(t *testing.T) {
	gvk := packKind(t)
	rng := rand.New(rand.NewPCG(1, 2))
	trainPack(t, gvk, rng)

	all := make([]byte, 4096)
	for i := range all {
		all[i] = byte(i)
	}
	big := letters(rng, 3*packBlock+777) // coded block by block
	mixed := append(letters(rng, packBlock), make([]byte, 0, packBlock)...)
	for range packBlock {
		mixed = append(mixed, byte(rng.Uint32())) // a block of random bytes kept as it is
	}
	mixed = append(mixed, letters(rng, 3000)...)
	cases := []struct {
		name   string
		raw    []byte
		packed bool
	}{
		{"letters", letters(rng, 1024), true},
		{"every byte value", all, false}, // no saving with a table of letters
		{"random bytes", randomBytes(rng, 2048), false},
		{"small", letters(rng, packMin-1), false},
		{"big", big, true},
		{"a random block among letters", mixed, true},
	}
	for _, c := range cases {
		out, packed := pack(pbKey(gvk), c.raw)
		if packed != c.packed {
			t.Errorf("%s (%d bytes): packed %v, want %v", c.name, len(c.raw), packed, c.packed)
		}
		if !packed {
			if !bytes.Equal(out, c.raw) {
				t.Errorf("%s: kept bytes differ", c.name)
			}
			continue
		}
		if len(out) > len(c.raw)-len(c.raw)/8 {
			t.Errorf("%s: packed %d bytes into %d, less than an eighth saved", c.name, len(c.raw), len(out))
		}
		got, err := unpack(pbKey(gvk), out, nil)
		if err != nil || !bytes.Equal(got, c.raw) {
			t.Errorf("%s: unpacked %d bytes (%v), want the %d packed", c.name, len(got), err, len(c.raw))
		}
		// Into a buffer too small and one large enough.
		for _, buf := range [][]byte{make([]byte, 0, 10), make([]byte, 5, len(c.raw)+10)} {
			if got, err := unpack(pbKey(gvk), out, buf); err != nil || !bytes.Equal(got, c.raw) {
				t.Errorf("%s: unpacked into a buffer of %d: %v", c.name, cap(buf), err)
			}
		}
	}
}

// A kind whose first bytes are random gets no table, and nothing of it is ever packed.
func TestPackRandomKindNeverPacked(t *testing.T) {
	gvk := packKind(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2 * packTrainBytes / 1024 {
		raw := randomBytes(rng, 1024)
		if _, packed := pack(pbKey(gvk), raw); packed {
			t.Fatal("random bytes packed")
		}
	}
	if !packTableFor(pbKey(gvk)).none.Load() || packTableFor(pbKey(gvk)).coder.Load() != nil {
		t.Error("random bytes gave a table")
	}
	if _, packed := pack(pbKey(gvk), letters(rng, 4096)); packed {
		t.Error("a kind without a table packed letters")
	}
}

// A kind whose first bytes code to more than 70% of them is not packed (nor tried again),
// though each object alone would save the eighth asked of one.
func TestPackKindOver70PercentNotPacked(t *testing.T) {
	gvk := packKind(t)
	rng := rand.New(rand.NewPCG(11, 12))
	wide := func(n int) []byte { // 52 symbols: 5.7 bits a byte, coded to ~74% as a pod is
		b := make([]byte, n)
		for i := range b {
			b[i] = 40 + byte(rng.IntN(52))
		}
		return b
	}
	for range 2 * packTrainBytes / 1024 {
		if _, packed := pack(pbKey(gvk), wide(1024)); packed {
			t.Fatal("a kind coding to more than 70% packed")
		}
	}
	if !packTableFor(pbKey(gvk)).none.Load() {
		t.Error("the kind was not given up")
	}
}

func TestUnpackCorrupt(t *testing.T) {
	gvk := packKind(t)
	rng := rand.New(rand.NewPCG(5, 6))
	trainPack(t, gvk, rng)
	raw := letters(rng, 2000)
	out, packed := pack(pbKey(gvk), raw)
	if !packed {
		t.Fatal("letters not packed")
	}
	// No header, a header alone, a length past any bound: errors.
	for _, bad := range [][]byte{nil, out[:1], {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, {0xff, 0xff, 0x03}} {
		if got, err := unpack(pbKey(gvk), bad, nil); err == nil {
			t.Errorf("corrupt bytes %x unpacked to %d bytes", bad, len(got))
		}
	}
	// Cut or grown: the one-block form holds no length of its coded bytes, so a Huffman stream
	// cut short may decode; never into more than the decoded length it says (the cache's bytes
	// are never changed after they are packed: this is robustness, not a checksum).
	for _, bad := range [][]byte{out[:len(out)-1], out[:len(out)/2], append(bytes.Clone(out), 0), append(bytes.Clone(out), out...)} {
		if got, err := unpack(pbKey(gvk), bad, nil); err == nil && len(got) != len(raw) {
			t.Errorf("corrupt bytes (%d of %d) unpacked to %d bytes, not the %d the header says", len(bad), len(out), len(got), len(raw))
		}
	}
	if _, err := unpack(pbKey(schema.GroupVersionKind{Kind: "NeverSeen"}), out, nil); err == nil {
		t.Error("bytes of a kind without a table unpacked")
	}
}

// FuzzPack: any bytes of a kind with a table pack and unpack to themselves; any bytes unpack to
// an error or to no more than their bound, never a panic.
func FuzzPack(f *testing.F) {
	gvk := schema.GroupVersionKind{Group: "pack.test", Version: "v1", Kind: "Fuzz"}
	rng := rand.New(rand.NewPCG(7, 8))
	for packTableFor(pbKey(gvk)).coder.Load() == nil {
		pack(pbKey(gvk), letters(rng, 1024))
	}
	out, _ := pack(pbKey(gvk), letters(rng, 3000))
	f.Add(out)
	f.Add(letters(rng, 300))
	f.Add(append(letters(rng, 600), randomBytes(rng, 200)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, err := unpack(pbKey(gvk), b, nil); err == nil && len(got) > len(b)*8+packBlock {
			t.Fatalf("%d bytes unpacked into %d", len(b), len(got))
		}
		out, packed := pack(pbKey(gvk), b)
		if !packed {
			if !bytes.Equal(out, b) {
				t.Fatal("bytes not packed came back changed")
			}
			return
		}
		if got, err := unpack(pbKey(gvk), out, nil); err != nil || !bytes.Equal(got, b) {
			t.Fatalf("packed %d bytes unpacked to %d (%v)", len(b), len(got), err)
		}
	})
}

// A ConfigMap's protobuf bytes are packed once its kind has a table, and decode to the same
// object; --drop-managed-fields keeps them packed.
func TestCompactProtobufPacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	mk := func(i int) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "cm" + strings.Repeat("x", i%7), Namespace: "ns", UID: "u", ResourceVersion: "7",
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", Operation: "Update", APIVersion: "v1", FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:payload":{}}}`)}}},
			Data: map[string]string{"payload": string(letters(rng, 1024))},
		}
	}
	var last *compactObject
	var want *corev1.ConfigMap
	for i := 0; i < 2*packTrainBytes/1024; i++ {
		want = mk(i)
		raw, err := want.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if last, err = compactFromProtobuf(raw, gvk); err != nil {
			t.Fatal(err)
		}
		last.pack()
		if last.packed {
			if len(last.raw) >= len(raw)-len(raw)/8 {
				t.Fatalf("packed %d bytes into %d", len(raw), len(last.raw))
			}
			break
		}
	}
	if !last.packed {
		t.Fatal("no ConfigMap packed")
	}
	if last.meta.Name != want.Name || last.meta.ResourceVersion != "7" {
		t.Errorf("metadata %+v", last.meta)
	}
	got, err := last.typed()
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("decoded %v, want %v", got, want)
	}
	u, err := last.decode()
	if err != nil || u.Object["data"].(map[string]any)["payload"] != want.Data["payload"] {
		t.Errorf("unstructured decode: %v", err)
	}
	cp := last.DeepCopyObject().(*compactObject)
	last.dropManagedFields()
	if !last.packed {
		t.Error("bytes without managedFields not packed")
	}
	if got, err := last.typed(); err != nil || len(got.(*corev1.ConfigMap).ManagedFields) != 0 || got.(*corev1.ConfigMap).Data["payload"] != want.Data["payload"] {
		t.Errorf("after dropManagedFields: %v", err)
	}
	if got, err := cp.typed(); err != nil || !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("the deep copy decodes otherwise: %v", err)
	}
}

// JSON objects (custom resources, --wire json) are packed with a table of their own kind and
// encoding: decoded, encoded and deep-copied as received, never aliasing the decoder's buffer.
func TestCompactJSONPacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	var last *compactObject
	var want []byte
	for i := 0; i < 2*packTrainBytes/1024 && (last == nil || !last.packed); i++ {
		want = fmt.Appendf(nil, `{"apiVersion":"example.com/v1","kind":"PackedJSON","metadata":{"name":"w%d","namespace":"ns","resourceVersion":"%d","uid":"u"},"spec":{"payload":%q,"n":%d}}`,
			i, 100+i, letters(rng, 1024), i)
		buf := bytes.Clone(want)
		o, _, err := compactJSONSerializer{}.Decode(buf, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for j := range buf { // the decoder's buffer, reused
			buf[j] = 'x'
		}
		last = o.(*compactObject)
		if u, err := last.decode(); err != nil || u.GetName() != fmt.Sprintf("w%d", i) || u.Object["spec"].(map[string]any)["n"] != int64(i) {
			t.Fatalf("object %d decoded as %v (%v): aliases the decoder's buffer?", i, u, err)
		}
	}
	if !last.packed {
		t.Fatal("no JSON object packed")
	}
	if _, ok := packTables.Load(packKey{gvk: last.gvk, codec: compactProtobuf}); ok {
		t.Error("JSON bytes trained the kind's protobuf table")
	}
	var out bytes.Buffer
	if err := (compactJSONSerializer{}).Encode(last, &out); err != nil || !bytes.Equal(out.Bytes(), want) {
		t.Errorf("Encode wrote %d bytes (%v), want the %d received", out.Len(), err, len(want))
	}
	var m map[string]any
	if err := json.Unmarshal(want, &m); err != nil {
		t.Fatal(err)
	}
	u, err := last.DeepCopyObject().(*compactObject).decode()
	if err != nil || u.Object["spec"].(map[string]any)["payload"] != m["spec"].(map[string]any)["payload"] {
		t.Errorf("the deep copy decodes otherwise: %v", err)
	}
}
