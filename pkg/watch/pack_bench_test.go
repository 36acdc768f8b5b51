package watch

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkPack: coding and decoding a kwok pod's protobuf with a table built from it (pods are
// not packed: they code to 74%, over the kinds' bound) and 1,300 bytes of letters.
func BenchmarkPack(b *testing.B) {
	podRaw := kwokPodProtobuf(b)
	rng := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		name string
		raw  []byte
	}{{"pod", podRaw}, {"letters", letters(rng, 1300)}} {
		var hist [256]uint64
		for _, x := range c.raw {
			hist[x]++
		}
		coder, coded := newPackCoder(&hist, len(c.raw))
		if coder == nil {
			b.Fatalf("%s: no table", c.name)
		}
		out, ok := coder.pack(c.raw)
		b.Logf("%s: %d bytes coded to %d (table %d%%, packed %v)", c.name, len(c.raw), len(out), coded, ok)
		b.Run(c.name+"/pack", func(b *testing.B) {
			for b.Loop() {
				coder.pack(c.raw)
			}
		})
		b.Run(c.name+"/unpack", func(b *testing.B) {
			buf := make([]byte, 0, 4096)
			for b.Loop() {
				h := out
				if _, err := coder.unpackTo(buf, h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// kwokPodProtobuf is the kwok pod of pkg/printer's testdata (a Running pod of make bench's pods
// workload) in protobuf.
func kwokPodProtobuf(b *testing.B) []byte {
	b.Helper()
	data, err := os.ReadFile("../printer/testdata/kwok-pod.json")
	if err != nil {
		b.Fatal(err)
	}
	var pod corev1.Pod
	if err := json.Unmarshal(data, &pod); err != nil {
		b.Fatal(err)
	}
	raw, err := pod.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	return raw
}
