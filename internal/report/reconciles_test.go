package report

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// realReconciles is a real recording with ControllerReconcile lines: hack/foo-controller's
// run of test/e2e TestControllerLogsFooController/text (how it was made:
// testdata/README.md).
const realReconciles = "testdata/foo-controller.ndjson.gz"

// reconcileCounts counts a recording's ControllerReconcile and Reconciled lines straight from
// its JSON, apart from the report's code.
type reconcileCounts struct {
	byController map[string]map[string]int // controller -> result -> lines
	byObject     map[string]map[string]int // "resource ns/name" -> result -> lines
	simulated    map[string]int            // "resource ns/name" -> Reconciled lines
	noTrigger    map[string]int            // controller -> lines without a trigger
}

func readRealReconciles(t *testing.T) []byte {
	t.Helper()
	f, err := os.Open(realReconciles)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// readPage reads a recording and makes its page.
func readPage(t *testing.T, data []byte, source string) (*Report, string) {
	t.Helper()
	r, err := Read(bytes.NewReader(data), source)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := r.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	return r, page.String()
}

func countReconciles(t *testing.T, data []byte) reconcileCounts {
	t.Helper()
	c := reconcileCounts{byController: map[string]map[string]int{}, byObject: map[string]map[string]int{},
		simulated: map[string]int{}, noTrigger: map[string]int{}}
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		var m map[string]any
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		res, _ := m["resource"].(string)
		if g, _ := m["group"].(string); g != "" {
			res += "." + g
		}
		key := fmt.Sprintf("%s %v", res, m["key"])
		switch m["type"] {
		case "Reconciled":
			c.simulated[key]++
		case "ControllerReconcile":
			ctrl, _ := m["controller"].(string)
			result, _ := m["result"].(string)
			if c.byController[ctrl] == nil {
				c.byController[ctrl] = map[string]int{}
			}
			c.byController[ctrl][result]++
			if n, _ := m["triggerCount"].(float64); n == 0 {
				c.noTrigger[ctrl]++
			}
			if res != "" {
				if c.byObject[key] == nil {
					c.byObject[key] = map[string]int{}
				}
				c.byObject[key][result]++
			}
		}
	}
	return c
}

// The real recording's reconciles are in the report as they are in its lines: one lane per
// controller with its reconciles by result (its bars adding up to them), each object's real
// reconciles by result apart from its simulated ones, and each in the object's history.
func TestControllerReconcileLanesOfARealRun(t *testing.T) {
	data := readRealReconciles(t)
	want := countReconciles(t, data)
	if len(want.byController) == 0 || len(want.simulated) == 0 {
		t.Fatalf("the recording has no ControllerReconcile or no Reconciled line: %v %v", want.byController, want.simulated)
	}
	if want.byController["foo-controller"]["error"] == 0 || want.byController["foo-controller"]["ok"] == 0 {
		t.Fatalf("the recording's reconciles are not both ok and failed: %v", want.byController)
	}
	r, err := Read(bytes.NewReader(data), "foo-controller.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]int{}
	noTrigger := map[string]int{}
	for _, l := range r.Lanes {
		got[l.Controller] = l.Counts
		noTrigger[l.Controller] = l.NoTrigger
		inBars := map[string]int{}
		for _, bar := range l.Bars {
			for res, n := range bar {
				inBars[res] += n
			}
		}
		if d := cmp.Diff(l.Counts, inBars); d != "" {
			t.Errorf("lane %s: its bars (-counts +bars):\n%s", l.Controller, d)
		}
	}
	if d := cmp.Diff(want.byController, got); d != "" {
		t.Errorf("lanes (-recording +report):\n%s", d)
	}
	if d := cmp.Diff(want.noTrigger, noTrigger); d != "" {
		t.Errorf("reconciles with no trigger (-recording +report):\n%s", d)
	}
	gotObj, gotSim := map[string]map[string]int{}, map[string]int{}
	for _, o := range r.Objects {
		key := o.Resource + " " + o.Key()
		if o.Real != nil {
			gotObj[key] = o.Real
		}
		if o.Reconciles > 0 {
			gotSim[key] = o.Reconciles
		}
		if !o.HasHistory || o.Elided > 0 {
			continue
		}
		inHistory := map[string]int{}
		for _, e := range o.History {
			if e.Type == "ControllerReconcile" {
				inHistory[e.Result]++
				if !strings.HasPrefix(e.Text, "by ") {
					t.Errorf("%s: history entry %q", key, e.Text)
				}
			}
		}
		if len(inHistory) == 0 {
			inHistory = nil
		}
		if d := cmp.Diff(want.byObject[key], inHistory); d != "" {
			t.Errorf("%s: history's reconciles (-recording +history):\n%s", key, d)
		}
	}
	if d := cmp.Diff(want.byObject, gotObj); d != "" {
		t.Errorf("objects' real reconciles (-recording +report):\n%s", d)
	}
	if d := cmp.Diff(want.simulated, gotSim); d != "" {
		t.Errorf("objects' simulated reconciles (-recording +report):\n%s", d)
	}
}

// The page draws each lane's bars (their data-count adding up, per result, to the lane's
// reconciles), failures in red (the r-error class), and the table's column of real
// reconciles apart from the simulated one.
func TestHTMLDrawsControllerReconciles(t *testing.T) {
	data := readRealReconciles(t)
	want := countReconciles(t, data)
	_, html := readPage(t, data, "foo-controller.ndjson")
	lanes := regexp.MustCompile(`(?s)<div class="row lane" data-controller="([^"]+)">(.*?)</svg>`).FindAllStringSubmatch(html, -1)
	if len(lanes) != len(want.byController) {
		t.Fatalf("%d lanes drawn, want %d", len(lanes), len(want.byController))
	}
	bar := regexp.MustCompile(`<rect class="rc r-(\w+)" [^>]*data-result="(\w+)" data-count="(\d+)"`)
	for _, lane := range lanes {
		drawn := map[string]int{}
		for _, m := range bar.FindAllStringSubmatch(lane[2], -1) {
			n, _ := strconv.Atoi(m[3])
			drawn[m[2]] += n
			if m[1] != m[2] {
				t.Errorf("a bar of class r-%s says result %s", m[1], m[2])
			}
		}
		if d := cmp.Diff(want.byController[lane[1]], drawn); d != "" {
			t.Errorf("lane %s (-recording +drawn):\n%s", lane[1], d)
		}
	}
	for _, s := range []string{`rect.r-error { fill: #cf222e; }`, `reconciles (from its log)`, `reconciles (simulated)`, `<i class="sw r-error"></i>reconcile error`} {
		if !strings.Contains(html, s) {
			t.Errorf("the page lacks %q", s)
		}
	}
	// Each row of the table: its real reconciles by result, as the recording has them.
	row := regexp.MustCompile(`<tr data-object="[^"]+"[^>]*><td>([^<]+)</td><td class="obj">([^<]+)</td>.*?<td class="real">(.*?)</td>`)
	count := regexp.MustCompile(`data-result="(\w+)" data-count="(\d+)"`)
	rows := 0
	for _, m := range row.FindAllStringSubmatch(html, -1) {
		key := m[1] + " " + m[2]
		got := map[string]int{}
		for _, c := range count.FindAllStringSubmatch(m[3], -1) {
			got[c[1]], _ = strconv.Atoi(c[2])
		}
		if len(got) == 0 {
			got = nil
		}
		if d := cmp.Diff(want.byObject[key], got); d != "" {
			t.Errorf("row %s (-recording +page):\n%s", key, d)
		}
		rows++
	}
	if rows == 0 {
		t.Fatal("no row of the objects table read")
	}
}

// The page keeps no raw control byte (C0, DEL, C1, bidirectional) and no credential from a
// controller's log (HOSTILE-CASES-2 F12, F8: esc.log's escapes were in the page raw, 43 ESC, 22
// BEL, 9 CR, 9 CSI, 9 RLO; its JWTs too): ControllerReconcile lines whose controller,
// reconcileID, kind, error and reason carry them.
func TestHTMLKeepsNoControlBytesFromLogs(t *testing.T) {
	const esc = "\u001b]52;c;cHduZWQ=\u0007\u001b]0;PWNTITLE\u0007\u001b[2J\u001b[H\r\u009b31m\u202eevil\u2066"
	const jwt = "eyJhbGciOiJSUzI1NiIsImtpZCI6IkFCQyJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6a3ViZS1zeXN0ZW06ZGVmYXVsdCJ9.c2lnbmF0dXJlc2lnbmF0dXJl"
	data := readRealReconciles(t)
	var out bytes.Buffer
	n := 0
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		var m map[string]any
		if json.Unmarshal(line, &m) != nil || m["type"] != "ControllerReconcile" {
			out.Write(line)
			out.WriteByte('\n')
			continue
		}
		if n++; n%2 == 0 {
			m["controller"] = "ctl" + esc
			m["reconcileID"] = "rid" + esc
			m["objectKind"] = "Widget" + esc
			m["result"] = "error"
			m["message"] = "boom" + esc + " Authorization: Bearer SECRETbearer123 token=" + jwt + " https://user:PASSWORD123@host/x?access_token=QSECRET"
			m["reasonMessage"] = "why" + esc
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	if n < 2 {
		t.Fatalf("%d ControllerReconcile lines in %s, want some", n, realReconciles)
	}
	_, page := readPage(t, out.Bytes(), "esc.ndjson")
	for i, r := range page {
		if r == '\n' || r == '\t' {
			continue
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			t.Fatalf("a raw control character %U at byte %d of the page: %q", r, i, page[max(0, i-60):min(len(page), i+20)])
		}
	}
	for _, s := range []string{"SECRETbearer123", jwt[:40], "PASSWORD123", "QSECRET"} {
		if strings.Contains(page, s) {
			t.Errorf("%q in the page", s)
		}
	}
	if !strings.Contains(page, `ctl^[]52;c;cHduZWQ=\x07`) {
		i := strings.Index(page, "PWNTITLE")
		t.Errorf("the controller's name is not in the page, escaped: %q", page[max(0, i-20):min(len(page), i+80)])
	}
}
