package replay

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"
)

// B5: a hostile recording (/dev/zero, a line of gigabytes, a gzip bomb) ends the reading with a
// line saying which bound it passed, after reading no more than the bound.
func TestReaderBounds(t *testing.T) {
	defer func(l, d int64) { maxLine, maxDecompressed = l, d }(maxLine, maxDecompressed)
	maxLine, maxDecompressed = 1<<10, 64<<10
	ok := `{"time":"2026-11-25T02:06:13.05Z","type":"Error","reason":"x","message":"m"}` + "\n"
	gz := func(s string) string {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		_, _ = w.Write([]byte(s))
		_ = w.Close()
		return b.String()
	}
	tests := []struct {
		name, input, wantErr string
		wantLines            int
	}{
		{"a long line", ok + strings.Repeat("A", 2<<10) + "\n" + ok, "line 2: longer than 16 MiB", 1},
		{"NUL bytes without end", strings.Repeat("\x00", 1<<20), "line 1: longer than", 0},
		{"a gzip bomb of one line", gz(strings.Repeat("A", 1<<20)), "line 1: longer than", 0},
		{"a gzip bomb of blank lines", gz(ok + strings.Repeat("\n", 1<<20)), "decompresses to more than 4 GiB", 1},
		{"a gzip recording within the bounds", gz(ok + ok), "EOF", 2},
	}
	for _, tt := range tests {
		rd, err := NewReader(strings.NewReader(tt.input))
		if err != nil {
			t.Fatal(err)
		}
		lines := 0
		for {
			_, err = rd.Next()
			if err != nil {
				break
			}
			lines++
		}
		if !strings.Contains(err.Error(), tt.wantErr) || lines != tt.wantLines {
			t.Errorf("%s: %d lines, then %v; want %d lines, then %q", tt.name, lines, err, tt.wantLines, tt.wantErr)
		}
		if _, again := rd.Next(); tt.wantErr != "EOF" && !errors.Is(again, err) {
			t.Errorf("%s: a bound is not sticky: then %v", tt.name, again)
		}
	}
}

// FuzzReader: within lowered bounds, any input gives lines no longer than the line bound and
// stops by the decompressed bound, or an error; never a panic.
func FuzzReader(f *testing.F) {
	defer func(l, d int64) { maxLine, maxDecompressed = l, d }(maxLine, maxDecompressed)
	maxLine, maxDecompressed = 512, 8<<10
	ok := `{"time":"2026-11-25T02:06:13.05Z","type":"Error","reason":"x","message":"m"}` + "\n"
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write([]byte(strings.Repeat(ok, 200)))
	_ = w.Close()
	f.Add([]byte(ok + ok))
	f.Add(gz.Bytes())
	f.Add([]byte(strings.Repeat("A", 600)))
	f.Add([]byte(`{"type":"Recording","formatVersion":1e300}` + "\n" + ok))
	f.Fuzz(func(t *testing.T, in []byte) {
		rd, err := NewReader(bytes.NewReader(in))
		if err != nil {
			return
		}
		for range 100_000 {
			line, err := rd.Next()
			if err != nil {
				if strings.ContainsAny(err.Error(), "\r\n") {
					t.Fatalf("error of more than one line: %q", err)
				}
				var lerr *LineError
				if errors.As(err, &lerr) {
					continue
				}
				return
			}
			if line.Number <= 0 {
				t.Fatalf("line number %d", line.Number)
			}
		}
		t.Fatal("no end after 100,000 lines of a bounded input")
	})
}

// L7: a header whose formatVersion is no version (1e300, -1) ends the reading; its events are
// not replayed as if it were fine.
func TestFormatVersionNotAVersion(t *testing.T) {
	ok := `{"time":"2026-11-25T02:06:13.05Z","type":"Error","reason":"x","message":"m"}` + "\n"
	for _, v := range []string{"1e300", "-1", "1.5", `"1"`} {
		rd, err := NewReader(strings.NewReader(`{"type":"Recording","formatVersion":` + v + "}\n" + ok))
		if err != nil {
			t.Fatal(err)
		}
		_, err = rd.Next()
		if err == nil || !strings.Contains(err.Error(), "which is no format version") {
			t.Errorf("formatVersion %s: %v", v, err)
		}
		if _, err := rd.Next(); err == nil {
			t.Errorf("formatVersion %s: an event was read after it", v)
		}
	}
}
