// Command dist builds the release artifacts of kubectl-informer: one archive per platform, a
// checksums file and the krew plugin manifest rendered from krew.yaml. `make dist VERSION=vX.Y.Z`
// runs it from the module root:
//
//	go run ./hack/dist -version v0.1.0 [-out dist] [-manifest krew.yaml] [-commit SHA] [-date RFC3339]
//
// It writes into the output directory:
//
//	kubectl-informer_<version>_<os>_<arch>.tar.gz   (.zip for windows): the binary and LICENSE
//	checksums.txt                                   sha256sum format, one line per archive
//	krew/informer.yaml                              krew.yaml with the version, URIs and sha256s
//
// Binaries are built with CGO_ENABLED=0, -trimpath and the same -ldflags as the Makefile's build.
// Archives are reproducible: entries are in a fixed order, owned by uid/gid 0, with the build
// date as their modification time; the build date defaults to the time of the HEAD commit
// (SOURCE_DATE_EPOCH overrides it), so the same commit and version give byte-identical archives.
//
// The template krew.yaml uses these placeholders: {{version}} anywhere; inside an item of
// spec.platforms, {{os}} and {{arch}} (that item's matchLabels) and {{sha256}} (its archive's).
// Full-line comments of the template are dropped.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

const (
	modulePath = "github.com/kubectl-informer/kubectl-informer"
	binName    = "kubectl-informer"
	pluginName = "informer"
)

// Platform is one release target.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Platforms are the release targets, in the order they are built and listed.
var Platforms = []Platform{
	{"linux", "amd64"},
	{"linux", "arm64"},
	{"darwin", "amd64"},
	{"darwin", "arm64"},
	{"windows", "amd64"},
}

// Artifact is one built archive.
type Artifact struct {
	Platform Platform
	Name     string // file name of the archive, in the output directory
	SHA256   string // lower-case hex
	Size     int64
}

// semverRe is semver 2.0.0 (https://semver.org) with the leading v krew requires.
var semverRe = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
	`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

// ValidVersion reports whether v is a semantic version with a leading v, such as v1.2.3 or
// v1.2.3-rc.1.
func ValidVersion(v string) bool { return semverRe.MatchString(v) }

// BinaryName is the plugin executable's name in the archive for goos.
func BinaryName(goos string) string {
	if goos == "windows" {
		return binName + ".exe"
	}
	return binName
}

// ArchiveName is the archive's file name for version and platform p.
func ArchiveName(version string, p Platform) string {
	ext := ".tar.gz"
	if p.OS == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("%s_%s_%s_%s%s", binName, version, p.OS, p.Arch, ext)
}

type options struct {
	version  string
	out      string
	manifest string
	commit   string
	date     string
	goCmd    string
}

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "release version, semver with a leading v (required)")
	flag.StringVar(&o.out, "out", "dist", "output directory")
	flag.StringVar(&o.manifest, "manifest", "krew.yaml", "krew plugin manifest template")
	flag.StringVar(&o.commit, "commit", "", "commit to stamp into the binary (default: git HEAD)")
	flag.StringVar(&o.date, "date", "", "build date, RFC 3339 (default: SOURCE_DATE_EPOCH, else the HEAD commit's time)")
	flag.Parse()
	o.goCmd = os.Getenv("GO")
	if o.goCmd == "" {
		o.goCmd = "go"
	}
	if flag.NArg() != 0 {
		fail(2, fmt.Errorf("unexpected arguments %q", flag.Args()))
	}
	if !ValidVersion(o.version) {
		fail(2, fmt.Errorf("VERSION %q is not a semantic version with a leading v; use e.g. make dist VERSION=v0.1.0", o.version))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		fail(1, err)
	}
}

func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, "dist: "+strings.ReplaceAll(err.Error(), "\n", "; "))
	os.Exit(code)
}

func run(ctx context.Context, o options) error {
	start := time.Now()
	license, err := os.ReadFile("LICENSE")
	if err != nil {
		return fmt.Errorf("run from the module root: %w", err)
	}
	tmpl, err := os.ReadFile(o.manifest)
	if err != nil {
		return err
	}
	// Check the template against the platforms before spending minutes building them.
	var dry []Artifact
	for _, p := range Platforms {
		dry = append(dry, Artifact{Platform: p, Name: ArchiveName(o.version, p), SHA256: strings.Repeat("0", 64)})
	}
	if _, err := RenderManifest(string(tmpl), o.version, dry); err != nil {
		return fmt.Errorf("%s: %w", o.manifest, err)
	}
	commit := o.commit
	if commit == "" {
		commit = gitCommit(ctx)
	}
	date, err := buildDate(ctx, o.date)
	if err != nil {
		return err
	}
	if err := cleanOut(o.out); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "kubectl-informer-dist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	ldflags := strings.Join([]string{"-s", "-w",
		"-X", modulePath + "/pkg/cmd.Version=" + o.version,
		"-X", modulePath + "/pkg/cmd.Commit=" + commit,
		"-X", modulePath + "/pkg/cmd.Date=" + date.Format(time.RFC3339),
	}, " ")
	fmt.Printf("dist: %s (commit %s, date %s) for %d platforms\n", o.version, commit, date.Format(time.RFC3339), len(Platforms))
	var arts []Artifact
	for _, p := range Platforms {
		t0 := time.Now()
		bin := filepath.Join(work, p.OS+"_"+p.Arch, BinaryName(p.OS))
		cmd := exec.CommandContext(ctx, o.goCmd, "build", "-trimpath", "-ldflags", ldflags, "-o", bin, "./cmd/kubectl-informer")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build for %s: %w", p, err)
		}
		binData, err := os.ReadFile(bin)
		if err != nil {
			return err
		}
		files := []archiveFile{
			{name: BinaryName(p.OS), mode: 0o755, data: binData},
			{name: "LICENSE", mode: 0o644, data: license},
		}
		var archive []byte
		if p.OS == "windows" {
			archive, err = zipArchive(files, date)
		} else {
			archive, err = tarGzArchive(files, date)
		}
		if err != nil {
			return fmt.Errorf("archive for %s: %w", p, err)
		}
		a := Artifact{Platform: p, Name: ArchiveName(o.version, p), Size: int64(len(archive))}
		sum := sha256.Sum256(archive)
		a.SHA256 = hex.EncodeToString(sum[:])
		if err := os.WriteFile(filepath.Join(o.out, a.Name), archive, 0o644); err != nil {
			return err
		}
		fmt.Printf("  %-48s %6.1f MiB  %s  (%s)\n", a.Name, float64(a.Size)/(1<<20), a.SHA256, time.Since(t0).Round(100*time.Millisecond))
		arts = append(arts, a)
	}

	if err := os.WriteFile(filepath.Join(o.out, "checksums.txt"), []byte(Checksums(arts)), 0o644); err != nil {
		return err
	}
	manifest, err := RenderManifest(string(tmpl), o.version, arts)
	if err != nil {
		return fmt.Errorf("%s: %w", o.manifest, err)
	}
	krewDir := filepath.Join(o.out, "krew")
	if err := os.MkdirAll(krewDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(krewDir, pluginName+".yaml"), []byte(manifest), 0o644); err != nil {
		return err
	}
	fmt.Printf("  %s, %s  (%s in all)\n", filepath.Join(o.out, "checksums.txt"),
		filepath.Join(krewDir, pluginName+".yaml"), time.Since(start).Round(time.Second))
	return nil
}

// cleanOut creates dir and removes what an earlier run left there, and nothing else.
func cleanOut(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, binName+"_*"))
	if err != nil {
		return err
	}
	old = append(old, filepath.Join(dir, "checksums.txt"), filepath.Join(dir, "krew"))
	for _, f := range old {
		if err := os.RemoveAll(f); err != nil {
			return err
		}
	}
	return nil
}

func gitCommit(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "none"
	}
	commit := strings.TrimSpace(string(out))
	if err := exec.CommandContext(ctx, "git", "diff", "--quiet", "HEAD").Run(); err != nil {
		commit += "-dirty"
	}
	return commit
}

// buildDate is flagDate if set, else SOURCE_DATE_EPOCH, else the HEAD commit's time, else now.
func buildDate(ctx context.Context, flagDate string) (time.Time, error) {
	if flagDate != "" {
		t, err := time.Parse(time.RFC3339, flagDate)
		if err != nil {
			return time.Time{}, fmt.Errorf("-date: %w", err)
		}
		return t.UTC(), nil
	}
	epoch := os.Getenv("SOURCE_DATE_EPOCH")
	if epoch == "" {
		if out, err := exec.CommandContext(ctx, "git", "log", "-1", "--format=%ct", "HEAD").Output(); err == nil {
			epoch = strings.TrimSpace(string(out))
		}
	}
	if epoch == "" {
		return time.Now().UTC().Truncate(time.Second), nil
	}
	sec, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH: %w", err)
	}
	return time.Unix(sec, 0).UTC(), nil
}

type archiveFile struct {
	name string
	mode int64
	data []byte
}

func tarGzArchive(files []archiveFile, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	for _, f := range files {
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     f.name,
			Mode:     f.mode,
			Size:     int64(len(f.data)),
			ModTime:  mtime,
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func zipArchive(files []archiveFile, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestCompression)
	})
	for _, f := range files {
		hdr := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: mtime}
		hdr.SetMode(os.FileMode(f.mode))
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Checksums is the checksums.txt content: "<sha256>  <file>" lines, as sha256sum prints them,
// sorted by file name.
func Checksums(arts []Artifact) string {
	sorted := append([]Artifact(nil), arts...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var b strings.Builder
	for _, a := range sorted {
		b.WriteString(a.SHA256 + "  " + a.Name + "\n")
	}
	return b.String()
}

var (
	placeholderRe = regexp.MustCompile(`\{\{\s*([a-z0-9]+)\s*\}\}`)
	platformsRe   = regexp.MustCompile(`^(\s*)platforms:\s*$`)
	labelRe       = regexp.MustCompile(`^\s*(?:-\s+)?(os|arch):\s*["']?([A-Za-z0-9_]+)["']?\s*$`)
	uriRe         = regexp.MustCompile(`^\s*(?:-\s+)?uri:\s*["']?([^"'\s]+)["']?\s*$`)
)

// RenderManifest renders the krew manifest template tmpl for version and the built arts.
// Every platform item of the template must have an os and arch label naming a built platform,
// each built platform must have exactly one item, and each item's uri must end in its archive's
// file name. Any placeholder left unknown is an error.
func RenderManifest(tmpl, version string, arts []Artifact) (string, error) {
	byPlatform := map[Platform]Artifact{}
	for _, a := range arts {
		byPlatform[a.Platform] = a
	}
	var lines []string
	for _, l := range strings.Split(tmpl, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		lines = append(lines, l)
	}

	// Find spec.platforms and split it into items, each starting with "- " at one indentation.
	start := -1
	baseIndent := 0
	for i, l := range lines {
		if m := platformsRe.FindStringSubmatch(l); m != nil {
			if start >= 0 {
				return "", errors.New("more than one platforms: key")
			}
			start, baseIndent = i+1, len(m[1])
		}
	}
	if start < 0 {
		return "", errors.New("no spec.platforms")
	}
	end := len(lines)
	itemIndent := -1
	var itemStarts []int
	for i := start; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " "))
		isItem := strings.HasPrefix(strings.TrimLeft(l, " "), "- ")
		if indent < baseIndent || (indent == baseIndent && !isItem) {
			end = i
			break
		}
		if isItem && (itemIndent < 0 || indent == itemIndent) {
			itemIndent = indent
			itemStarts = append(itemStarts, i)
		}
	}
	if len(itemStarts) == 0 {
		return "", errors.New("spec.platforms has no items")
	}

	used := map[Platform]bool{}
	for k, s := range itemStarts {
		e := end
		if k+1 < len(itemStarts) {
			e = itemStarts[k+1]
		}
		var p Platform
		uri := ""
		for _, l := range lines[s:e] {
			if m := labelRe.FindStringSubmatch(l); m != nil {
				if m[1] == "os" {
					p.OS = m[2]
				} else {
					p.Arch = m[2]
				}
			}
			if m := uriRe.FindStringSubmatch(l); m != nil {
				uri = m[1]
			}
		}
		a, ok := byPlatform[p]
		if !ok {
			return "", fmt.Errorf("platforms[%d] (os=%q arch=%q) is not a built platform", k, p.OS, p.Arch)
		}
		if used[p] {
			return "", fmt.Errorf("platforms[%d]: %s appears twice", k, p)
		}
		used[p] = true
		vars := map[string]string{"version": version, "os": p.OS, "arch": p.Arch, "sha256": a.SHA256}
		for i := s; i < e; i++ {
			var err error
			if lines[i], err = substitute(lines[i], vars); err != nil {
				return "", fmt.Errorf("platforms[%d]: %w", k, err)
			}
		}
		if uri, err := substitute(uri, vars); err != nil || path.Base(uri) != a.Name {
			return "", fmt.Errorf("platforms[%d] (%s): uri %q does not end in %s", k, p, uri, a.Name)
		}
	}
	for _, a := range arts {
		if !used[a.Platform] {
			return "", fmt.Errorf("no item in spec.platforms for %s", a.Platform)
		}
	}
	vars := map[string]string{"version": version}
	for i := range lines {
		if i >= start && i < end {
			continue
		}
		var err error
		if lines[i], err = substitute(lines[i], vars); err != nil {
			return "", err
		}
	}
	return strings.Join(lines, "\n"), nil
}

func substitute(s string, vars map[string]string) (string, error) {
	var err error
	out := placeholderRe.ReplaceAllStringFunc(s, func(m string) string {
		name := placeholderRe.FindStringSubmatch(m)[1]
		v, ok := vars[name]
		if !ok && err == nil {
			err = fmt.Errorf("unknown placeholder %s", m)
		}
		return v
	})
	if err == nil && strings.Contains(out, "{{") {
		err = fmt.Errorf("malformed placeholder in %q", strings.TrimSpace(s))
	}
	return out, err
}
