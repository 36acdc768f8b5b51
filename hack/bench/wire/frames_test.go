package main

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// frame encodes one watch event as the API server does: the object with the protobuf
// serializer (envelope included), the WatchEvent around it raw.
func frame(t testing.TB, typ string, obj runtime.Object) []byte {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	if err := protobuf.NewSerializer(scheme, scheme).Encode(obj, &raw); err != nil {
		t.Fatal(err)
	}
	ev := metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: raw.Bytes()}}
	b, err := ev.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stream frames the events with the server's length-delimited framer.
func stream(t testing.TB, frames ...[]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := protobuf.LengthDelimitedFramer.NewFrameWriter(&b)
	for _, f := range frames {
		if _, err := w.Write(f); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func cm(name string, annotations map[string]string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench", ResourceVersion: "42", Annotations: annotations},
		Data:       data,
	}
}

var endAnnotation = map[string]string{metav1.InitialEventsAnnotationKey: "true"}

// chunks is a reader that returns its data in reads of the given sizes, in turn.
type chunks struct {
	data  []byte
	sizes []int
	i     int
}

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.data), c.sizes[c.i%len(c.sizes)])
	c.i++
	n = copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func TestFrameReader(t *testing.T) {
	a := bytes.Repeat([]byte("a"), 10)
	b := bytes.Repeat([]byte("b"), 100) // larger than the buffer: it grows
	c := []byte{}                       // an empty frame is a frame
	all := stream(t, a, b, c, a)
	tests := []struct {
		name    string
		r       io.Reader
		want    [][]byte
		wantErr error
	}{
		{name: "one read", r: bytes.NewReader(all), want: [][]byte{a, b, c, a}, wantErr: io.EOF},
		{name: "a byte per read", r: iotest.OneByteReader(bytes.NewReader(all)), want: [][]byte{a, b, c, a}, wantErr: io.EOF},
		{name: "the length prefix split", r: &chunks{data: all, sizes: []int{2, 3}}, want: [][]byte{a, b, c, a}, wantErr: io.EOF},
		{name: "frames split across reads", r: &chunks{data: all, sizes: []int{7, 50, 13}}, want: [][]byte{a, b, c, a}, wantErr: io.EOF},
		{name: "data and EOF in one read", r: iotest.DataErrReader(bytes.NewReader(all)), want: [][]byte{a, b, c, a}, wantErr: io.EOF},
		{name: "empty stream", r: bytes.NewReader(nil), wantErr: io.EOF},
		{name: "cut inside a frame", r: bytes.NewReader(all[:len(all)-3]), want: [][]byte{a, b, c}, wantErr: io.ErrUnexpectedEOF},
		{name: "cut inside a length", r: bytes.NewReader(all[:2]), wantErr: io.ErrUnexpectedEOF},
		{name: "a read error", r: iotest.TimeoutReader(bytes.NewReader(all)), want: [][]byte{a}, wantErr: iotest.ErrTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fr := newFrameReader(tc.r, 16, 1<<10)
			var got [][]byte
			var err error
			for {
				var f []byte
				if f, err = fr.next(); err != nil {
					break
				}
				got = append(got, bytes.Clone(f))
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(bytes.Equal)); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
			if fr.Frames != int64(len(tc.want)) {
				t.Errorf("Frames = %d, want %d", fr.Frames, len(tc.want))
			}
		})
	}
}

func TestFrameReaderTooLarge(t *testing.T) {
	fr := newFrameReader(bytes.NewReader(stream(t, make([]byte, 2000))), 16, 1<<10)
	if _, err := fr.next(); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err = %v, want a frame too large", err)
	}
}

func TestFrameFields(t *testing.T) {
	tests := []struct {
		name          string
		frame         []byte
		wantType      string
		wantEnd       bool
		wantKey       string
		wantKeyFailed bool
	}{
		{name: "added", frame: frame(t, "ADDED", cm("bench-000001", nil, map[string]string{"rev": "0"})),
			wantType: "ADDED", wantKey: "bench/bench-000001"},
		{name: "the end bookmark", frame: frame(t, "BOOKMARK", cm("", endAnnotation, nil)),
			wantType: "BOOKMARK", wantEnd: true, wantKeyFailed: true},
		{name: "a bookmark without the annotation", frame: frame(t, "BOOKMARK", cm("", nil, nil)),
			wantType: "BOOKMARK", wantKeyFailed: true},
		{name: "a bookmark with the annotation false", frame: frame(t, "BOOKMARK", cm("", map[string]string{metav1.InitialEventsAnnotationKey: "false"}, nil)),
			wantType: "BOOKMARK", wantKeyFailed: true},
		{name: "an object that carries the annotation is not a bookmark", frame: frame(t, "MODIFIED", cm("bench-000002", endAnnotation, nil)),
			wantType: "MODIFIED", wantKey: "bench/bench-000002"},
		{name: "not protobuf", frame: []byte("{\"type\":\"ADDED\"}"), wantKeyFailed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(eventType(tc.frame)); got != tc.wantType {
				t.Errorf("eventType = %q, want %q", got, tc.wantType)
			}
			if got := initialEventsEnd(tc.frame); got != tc.wantEnd {
				t.Errorf("initialEventsEnd = %v, want %v", got, tc.wantEnd)
			}
			ns, name, ok := objectKey(tc.frame)
			if tc.wantKeyFailed {
				if ok && len(name) > 0 {
					t.Errorf("objectKey = %s/%s, want none", ns, name)
				}
				return
			}
			if got := string(ns) + "/" + string(name); !ok || got != tc.wantKey {
				t.Errorf("objectKey = %q, %v; want %q", got, ok, tc.wantKey)
			}
		})
	}
}

func TestFollow(t *testing.T) {
	added := func(name string) []byte { return frame(t, "ADDED", cm(name, nil, map[string]string{"rev": "0"})) }
	end := frame(t, "BOOKMARK", cm("", endAnnotation, nil))
	plain := frame(t, "BOOKMARK", cm("", nil, nil))
	res := resource{version: "v1", plural: "configmaps"}
	synced := `{"type":"Synced","group":"","version":"v1","resource":"configmaps","items":%d}` + "\n"
	tests := []struct {
		name    string
		frames  [][]byte
		want    string
		wantErr string
	}{
		{
			name:   "objects, a bookmark between, the end, updates, a later bookmark",
			frames: [][]byte{added("bench-000000"), plain, added("bench-000001"), end, frame(t, "MODIFIED", cm("bench-000001", nil, nil)), plain, frame(t, "DELETED", cm("bench-000000", nil, nil))},
			want:   strings.Replace(synced, "%d", "2", 1) + "MODIFIED bench/bench-000001\nDELETED bench/bench-000000\n",
		},
		{name: "an empty namespace", frames: [][]byte{end}, want: strings.Replace(synced, "%d", "0", 1)},
		{name: "no end yet: nothing", frames: [][]byte{added("bench-000000"), plain}, want: ""},
		{name: "a second end bookmark is not a second sync", frames: [][]byte{end, end}, want: strings.Replace(synced, "%d", "0", 1)},
		{name: "an ERROR event", frames: [][]byte{added("bench-000000"), frame(t, "ERROR", cm("", nil, nil))}, wantErr: "ERROR event"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			// Three bytes a read: every frame arrives split.
			fr := newFrameReader(&chunks{data: stream(t, tc.frames...), sizes: []int{3}}, 64, 1<<20)
			err := follow(fr, &out, res)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			} else if !errors.Is(err, io.EOF) {
				t.Fatalf("err = %v, want EOF", err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}
