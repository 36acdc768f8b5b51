package report

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// FuzzReport: any input is a report or an error, never a panic; and whatever the recording
// says, the page has only its own two script elements and no markup of the recording's.
func FuzzReport(f *testing.F) {
	data, err := os.ReadFile(fixture)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	lines := bytes.SplitAfter(data, []byte("\n"))
	f.Add(bytes.Join(lines[:6], nil))
	r := newRec()
	r.line(0, "Added", cm("demo", "<b>x</b>", "1", "<script>", "2026-11-21T05:00:00Z", "<img src=x>")+`,"delta":"Added"`)
	r.line(5, "Updated", cm("demo", "<b>x</b>", "2", "</title><svg onload=1>", "2026-11-21T05:00:01Z", "</script>")+`,"oldResourceVersion":"1","delta":"Updated"`)
	f.Add([]byte(r.b.String()))
	many := newRec()
	for i := range 2000 {
		many.line(i, "Error", `,"group":"","version":"v1","resource":"configmaps","kind":"ConfigMap","reason":"x","message":"m","verb":"watch"`)
	}
	f.Add([]byte(many.b.String()))
	f.Fuzz(func(t *testing.T, in []byte) {
		rep, err := Read(bytes.NewReader(in), "fuzz")
		if rep == nil {
			if err == nil {
				t.Fatal("no report and no error")
			}
			return
		}
		var page bytes.Buffer
		if err := rep.WriteHTML(&page); err != nil {
			t.Fatal(err)
		}
		// The page's bounds: at most one drawn mark per resource, marker type and bucket.
		if marks, most := strings.Count(page.String(), `<g class="marker`), MaxBuckets*len(markerSymbol)*(len(rep.Resources)+1); marks > most {
			t.Fatalf("%d markers drawn, more than %d", marks, most)
		}
		html := strings.ToLower(page.String())
		if n := strings.Count(html, "<script"); n != 2 {
			t.Fatalf("%d <script elements", n)
		}
		for _, bad := range []string{"<img", "<b>x", "<svg onload"} {
			if strings.Contains(html, bad) {
				t.Fatalf("the page has %q", bad)
			}
		}
	})
}
