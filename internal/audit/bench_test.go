package audit

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkParse is the audit log reader's cost per line (parse, the join's index and top's
// counts) of a real API server's log at each level (testdata: test/testenv's AuditPolicy under
// the e2e story and a poller); make bench runs it beside ctrllog's: lines/s per core is
// 1e9 / ns/op.
func BenchmarkParse(b *testing.B) {
	for _, name := range []string{"metadata.log", "requestresponse.log"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			b.Fatal(err)
		}
		var lines [][]byte
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, MaxLine), MaxLine)
		for sc.Scan() {
			lines = append(lines, append([]byte(nil), sc.Bytes()...))
		}
		for _, writesOnly := range []bool{false, true} {
			// top decodes every line; watch's join only the writes.
			sub := name + "/top"
			if writesOnly {
				sub = name + "/watch"
			}
			b.Run(sub, func(b *testing.B) {
				j, l := NewJoiner(DefaultWait, DefaultWindow), NewLoad(time.Minute)
				r := &LineReader{Source: name, Notice: func(s string) { b.Fatal(s) }, WritesOnly: writesOnly, Event: func(e *Event) {
					j.Add(e)
					l.Add(e)
				}}
				now := time.Now()
				b.ReportAllocs()
				b.SetBytes(int64(len(data) / len(lines)))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					r.Line(lines[i%len(lines)], now)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
			})
		}
	}
}
