package ctrllog

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzParse feeds arbitrary lines to the reconstructor, seeded with every captured line kind:
// each is parsed or counted as other, never a panic, and a reconcile always names an object.
func FuzzParse(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*.log"))
	if len(names) == 0 {
		f.Fatal("no seeds: testdata/*.log")
	}
	for _, name := range names {
		file, err := os.Open(name)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(file)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for i := 0; sc.Scan() && i < 40; i++ {
			f.Add(sc.Text(), sc.Text())
		}
		file.Close()
	}
	// The formats no captured log here is in: another JSON logger's keys, logfmt, keys named.
	for _, seed := range [][2]string{
		{`{"level":"INFO","time":"2026-11-25T03:27:20.123Z","message":"status updated","controller":"widget","controllerKind":"Widget","Widget":{"name":"w","namespace":"d"},"namespace":"d","name":"w","reconcileID":"a"}`,
			`{"level":"ERROR","time":"2026-11-25T03:27:20.456Z","message":"Reconciler error","controller":"widget","controllerKind":"Widget","namespace":"d","name":"w","reconcileID":"a","error":"boom"}`},
		{`time="2026-11-25T03:27:20.123Z" level=info msg="status updated" controller=widget controllerKind=Widget namespace=d name=w reconcile_id=b`,
			`time=2026-11-25T03:27:20.5Z level=ERROR msg="Reconciler error" controller=widget controllerKind=Widget namespace=d name=w reconcileID=b error="it \"broke\""`},
		{`{"@timestamp":"2026-11-25T03:27:20.123Z","log.level":"error","message":"x","severity":50,"time":1795577240123}`, `{"level":30,"time":"1795577240.5","msg":"x"}`},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		r := NewReconstructor("fuzz")
		now := time.Now()
		got := append(r.Feed([]byte(a), now), r.Feed([]byte(b), now)...)
		got = append(got, r.Flush()...)
		for _, rc := range got {
			if rc.Object.Name == "" {
				t.Fatalf("a reconcile of no object from %q, %q", a, b)
			}
		}
		if r.Stats.Lines != 2 {
			t.Fatalf("lines %d", r.Stats.Lines)
		}
	})
}
