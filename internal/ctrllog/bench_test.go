package ctrllog

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
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

// floodLines are n klog lines of a busy controller (HOSTILE-CASES-2 F2's flood.py: "Successfully
// synced" of hl/o-0 ... hl/o-999 in turn), 10µs apart from start.
func floodLines(n int, start time.Time) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		at := start.Add(time.Duration(i) * 10 * time.Microsecond)
		out[i] = fmt.Appendf(nil, `I%s 1 c.go:1] "Successfully synced" objectName="hl/o-%d"`, at.Format("0102 15:04:05.000000"), i%1000)
	}
	return out
}

// BenchmarkJoin is the lines per second of a controller's log through the reconstruction and
// the join, at 500,000 lines of a busy klog controller (make bench runs it): read all at once
// (a file read from its start: beyond MaxPending reconciles are joined early), and live (read
// 10µs apart, as a log growing at 100,000 lines a second, the join's Due every 100ms).
func BenchmarkJoin(b *testing.B) {
	const n = 500_000
	start := time.Now().Add(-time.Minute).Truncate(time.Second)
	lines := floodLines(n, start)
	cms := discovery.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	for _, live := range []bool{false, true} {
		b.Run(map[bool]string{false: "file", true: "live"}[live], func(b *testing.B) {
			b.ReportAllocs()
			joined := 0
			for range b.N {
				r := NewReconstructor("flood.log")
				j := NewJoin(JoinConfig{Resources: []discovery.Resource{cms}, Skew: DefaultSkew, Hold: DefaultHold})
				next := start
				for i, l := range lines {
					read := start.Add(time.Minute)
					if live {
						read = start.Add(time.Duration(i) * 10 * time.Microsecond)
					}
					for _, rc := range r.Feed(l, read) {
						joined += len(j.Add(rc))
					}
					if live && !read.Before(next) {
						joined += len(j.Due(read))
						next = read.Add(100 * time.Millisecond)
					}
				}
				joined += len(j.Flush())
			}
			if joined != n*b.N {
				b.Fatalf("%d joined, want %d", joined, n*b.N)
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}
