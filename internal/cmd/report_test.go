package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func TestReportRun(t *testing.T) {
	dir := t.TempDir()
	fixture, err := os.ReadFile("../../pkg/replay/testdata/configmaps.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.ndjson", string(fixture))
	damaged := write("damaged.ndjson", string(fixture)+`{"type":"Added","time":`+"\n")
	notRec := write("notes.txt", "these are my notes\n")
	tests := []struct {
		name       string
		file       string
		output     string
		stdin      string
		wantErr    string
		wantHTML   bool // a page was written
		wantStdout bool
	}{
		{name: "to a file", file: good, output: "out.html", wantHTML: true},
		{name: "to stdout", file: good, wantStdout: true},
		{name: "stdin", file: "-", stdin: string(fixture), output: "stdin.html", wantHTML: true},
		{name: "missing file", file: filepath.Join(dir, "nope.ndjson"), output: "x.html", wantErr: `the path "` + filepath.Join(dir, "nope.ndjson") + `" does not exist`},
		{name: "not a recording", file: notRec, output: "notes.html", wantErr: "is not a recording: line 1: invalid JSON"},
		{name: "damaged line", file: damaged, output: "damaged.html", wantErr: "1 damaged line not in the report (line 33", wantHTML: true},
		{name: "a directory", file: dir, output: "dir.html", wantErr: "is a directory, not a recording"},
		{name: "into a missing directory", file: good, output: "nowhere/x.html", wantErr: "nowhere/x.html: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			o := NewReportOptions(genericiooptions.IOStreams{In: strings.NewReader(tt.stdin), Out: &out, ErrOut: &errOut})
			if tt.output != "" {
				o.Output = filepath.Join(dir, tt.output)
			}
			if err := o.Complete(nil, []string{tt.file}); err != nil {
				t.Fatal(err)
			}
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			err := o.Run(context.Background())
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if tt.output != "" {
				page, rerr := os.ReadFile(o.Output)
				if written := rerr == nil; written != tt.wantHTML {
					t.Fatalf("page written: %v, want %v", written, tt.wantHTML)
				}
				if tt.wantHTML && !bytes.HasPrefix(page, []byte("<!DOCTYPE html>")) {
					t.Errorf("not a page: %.80s", page)
				}
			}
			if got := strings.HasPrefix(out.String(), "<!DOCTYPE html>"); got != tt.wantStdout {
				t.Errorf("page on stdout: %v, want %v", got, tt.wantStdout)
			}
		})
	}
}

func TestReportValidate(t *testing.T) {
	tests := []struct {
		name, file, output, wantErr string
	}{
		{name: "stdout not a terminal", file: "a.ndjson"},
		{name: "forced stdout", file: "a.ndjson", output: "-"},
		{name: "overwrite the recording", file: "a.ndjson", output: "./a.ndjson", wantErr: "-o ./a.ndjson would overwrite the recording"},
		{name: "empty file name", file: " ", wantErr: "you must specify a recording"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewReportOptions(genericiooptions.IOStreams{Out: &bytes.Buffer{}})
			o.Output = tt.output
			_ = o.Complete(nil, []string{tt.file})
			err := o.Validate()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
