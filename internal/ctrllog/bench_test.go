package ctrllog

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkParse is the reconstructor's cost per line of each captured format (make bench runs
// it: lines/s per core is 1e9 / ns/op).
func BenchmarkParse(b *testing.B) {
	for _, name := range []string{"widget-operator-json.log", "widget-operator-console.log", "kube-controller-manager-text.log", "kube-controller-manager-json.log"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			b.Fatal(err)
		}
		var lines [][]byte
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines = append(lines, append([]byte(nil), sc.Bytes()...))
		}
		b.Run(name, func(b *testing.B) {
			r := NewReconstructor(name)
			now := time.Now()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r.Feed(lines[i%len(lines)], now)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}
