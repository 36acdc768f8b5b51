package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

func TestValidVersion(t *testing.T) {
	for v, want := range map[string]bool{
		"v0.1.0": true, "v1.2.3": true, "v10.20.30": true, "v1.0.0-rc.1": true,
		"v1.0.0-alpha.beta+build.7": true, "v0.0.0-disttest": true,
		"": false, "1.2.3": false, "v1.2": false, "v1": false, "v01.2.3": false, "v1.2.3-": false,
		"v1.2.3-01": false, "V1.2.3": false, "v1.2.3 ": false, "9e711b9-dirty": false, "dev": false,
		"v1.2.3/../x": false,
	} {
		if got := ValidVersion(v); got != want {
			t.Errorf("ValidVersion(%q) = %v, want %v", v, got, want)
		}
	}
}

func artifacts(version string) []Artifact {
	var arts []Artifact
	for i, p := range Platforms {
		arts = append(arts, Artifact{Platform: p, Name: ArchiveName(version, p), SHA256: strings.Repeat(string(rune('a'+i)), 64)})
	}
	return arts
}

func TestRenderManifest(t *testing.T) {
	tmpl, err := os.ReadFile("../../krew.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := RenderManifest(string(tmpl), "v1.2.3", artifacts("v1.2.3"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`version: "v1.2.3"`,
		"uri: https://github.com/kubectl-informer/kubectl-informer/releases/download/v1.2.3/kubectl-informer_v1.2.3_linux_amd64.tar.gz\n" +
			`    sha256: "` + strings.Repeat("a", 64) + `"`,
		"uri: https://github.com/kubectl-informer/kubectl-informer/releases/download/v1.2.3/kubectl-informer_v1.2.3_windows_amd64.zip\n" +
			`    sha256: "` + strings.Repeat("e", 64) + `"` + "\n    bin: kubectl-informer.exe",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rendered manifest lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "{{") || strings.Contains(out, "#") {
		t.Errorf("placeholder or comment left:\n%s", out)
	}
}

func TestRenderManifestRejects(t *testing.T) {
	good, err := os.ReadFile("../../krew.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		tmpl string
		arts []Artifact
		want string
	}{
		"unknown placeholder":  {strings.Replace(string(good), `version: "{{version}}"`, `version: "{{release}}"`, 1), artifacts("v1.0.0"), "unknown placeholder"},
		"platform not built":   {string(good), artifacts("v1.0.0")[1:], "not a built platform"},
		"built, not listed":    {string(good), append(artifacts("v1.0.0"), Artifact{Platform: Platform{"linux", "s390x"}, Name: ArchiveName("v1.0.0", Platform{"linux", "s390x"})}), "no item in spec.platforms for linux/s390x"},
		"uri names other file": {strings.Replace(string(good), "{{arch}}.zip", "{{arch}}.tar.gz", 1), artifacts("v1.0.0"), "does not end in"},
		"no platforms":         {"apiVersion: x\nspec:\n  version: {{version}}\n", nil, "no spec.platforms"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := RenderManifest(tc.tmpl, "v1.0.0", tc.arts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestChecksums(t *testing.T) {
	arts := artifacts("v1.0.0")
	got := Checksums([]Artifact{arts[4], arts[0], arts[2]})
	want := strings.Repeat("c", 64) + "  kubectl-informer_v1.0.0_darwin_amd64.tar.gz\n" +
		strings.Repeat("a", 64) + "  kubectl-informer_v1.0.0_linux_amd64.tar.gz\n" +
		strings.Repeat("e", 64) + "  kubectl-informer_v1.0.0_windows_amd64.zip\n"
	if got != want {
		t.Errorf("Checksums:\n%s\nwant:\n%s", got, want)
	}
}

func TestArchivesAreReproducible(t *testing.T) {
	files := []archiveFile{{name: "kubectl-informer", mode: 0o755, data: []byte("bin")}, {name: "LICENSE", mode: 0o644, data: []byte("license")}}
	date := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for name, mk := range map[string]func([]archiveFile, time.Time) ([]byte, error){"tar.gz": tarGzArchive, "zip": zipArchive} {
		a, err := mk(files, date)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(1100 * time.Millisecond) // a second later, nothing may change
		b, err := mk(files, date)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s archives differ between two runs", name)
		}
		if name == "zip" {
			zr, err := zip.NewReader(bytes.NewReader(a), int64(len(a)))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range zr.File {
				if !f.Modified.Equal(date) {
					t.Errorf("zip %s: mtime %v, want %v", f.Name, f.Modified, date)
				}
			}
			continue
		}
		gz, err := gzip.NewReader(bytes.NewReader(a))
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(gz)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if !h.ModTime.Equal(date) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" {
				t.Errorf("tar %s: mtime %v uid %d gid %d uname %q", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname)
			}
		}
	}
}
