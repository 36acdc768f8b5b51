package dist

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// DIST_PLATFORMS says which release platforms TestDist builds: "all" (the default when unset:
// `make dist-test DIST_PLATFORMS=all`, what docs/release.md runs before a release) builds the
// five; "host" (what `make test` passes) builds this machine's only, and the other four are
// type-checked from source (TestReleasePlatformsTypeCheck) instead of compiled and linked: on a
// new machine each platform's compile is about 4.5 CPU-minutes (docs/testcluster.md).
func hostOnly(t *testing.T) bool {
	t.Helper()
	switch v := os.Getenv("DIST_PLATFORMS"); v {
	case "", "all":
		return false
	case "host":
		return true
	default:
		t.Fatalf("DIST_PLATFORMS=%q: want all or host", v)
		return false
	}
}

// hostTarget is this machine's platform as goreleaser names a build target, and its os and arch;
// the test fails on a machine that is no release platform (there DIST_PLATFORMS=all builds them).
func hostTarget(t *testing.T) (target string, platform [2]string) {
	t.Helper()
	platform = [2]string{runtime.GOOS, runtime.GOARCH}
	for _, tg := range targets {
		if tg != platform {
			continue
		}
		switch tg[1] {
		case "amd64":
			return tg[0] + "_amd64_v1", tg
		case "arm64":
			return tg[0] + "_arm64_v8.0", tg
		}
	}
	t.Fatalf("this machine (%s/%s) is no release platform: run with DIST_PLATFORMS=all", runtime.GOOS, runtime.GOARCH)
	return "", platform
}

// releaseConfig is .goreleaser.yaml writing into out; with host set, each build's platform matrix
// is replaced by this machine's target (goreleaser's builds[].targets), all else as checked in.
func releaseConfig(t *testing.T, root, out string, host bool) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !host {
		return append(b, []byte("\ndist: "+out+"\n")...)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	target, _ := hostTarget(t)
	builds, _ := cfg["builds"].([]any)
	if len(builds) == 0 {
		t.Fatal(".goreleaser.yaml has no builds")
	}
	for _, b := range builds {
		build := b.(map[string]any)
		delete(build, "goos")
		delete(build, "goarch")
		delete(build, "ignore")
		build["targets"] = []string{target}
	}
	cfg["dist"] = out
	y, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return y
}

// configTargets are the <os,arch> pairs .goreleaser.yaml's build matrix makes (goos × goarch,
// less ignore), sorted.
func configTargets(t *testing.T, root string) [][2]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Builds []struct {
			Goos, Goarch []string
			Ignore       []struct{ Goos, Goarch string }
		}
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	var out [][2]string
	for _, build := range cfg.Builds {
		for _, goos := range build.Goos {
		arch:
			for _, goarch := range build.Goarch {
				for _, ig := range build.Ignore {
					if ig.Goos == goos && ig.Goarch == goarch {
						continue arch
					}
				}
				out = append(out, [2]string{goos, goarch})
			}
		}
	}
	sortPlatforms(out)
	return out
}

func sortPlatforms(p [][2]string) {
	sort.Slice(p, func(i, j int) bool { return p[i][0]+"/"+p[i][1] < p[j][0]+"/"+p[j][1] })
}

// TestReleaseMatrix: .goreleaser.yaml builds exactly the release platforms the tests check
// (targets), so what DIST_PLATFORMS=host leaves to a type-check is what a release builds.
func TestReleaseMatrix(t *testing.T) {
	got := configTargets(t, moduleRoot(t))
	want := append([][2]string(nil), targets...)
	sortPlatforms(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf(".goreleaser.yaml builds %v, the release platforms are %v", got, want)
	}
}

// checkCommittedPlatforms (DIST_PLATFORMS=host): the committed krew.yaml's items for the
// platforms this run did not build are what goreleaser writes for them given the one it built:
// the same uri and bin with the platform's os, arch and archive format (zip and .exe on windows).
func checkCommittedPlatforms(t *testing.T, committed manifest, built platform, host [2]string) {
	t.Helper()
	validateSelectors(t, committed)
	suffix := "_" + host[0] + "_" + host[1] + ".tar.gz"
	if !strings.HasSuffix(built.uri(), suffix) {
		t.Fatalf("the built archive's uri %s does not end in %s", built.uri(), suffix)
	}
	version := committed.str("spec", "version")
	prefix := strings.ReplaceAll(strings.TrimSuffix(built.uri(), suffix), testVersion, version)
	for _, pl := range committed.platforms() {
		sel := pl.selector()
		if sel == nil {
			continue // validateSelectors said so
		}
		goos, goarch := sel.MatchLabels["os"], sel.MatchLabels["arch"]
		ext, bin := ".tar.gz", binName
		if goos == "windows" {
			ext, bin = ".zip", binName+".exe"
		}
		if want := prefix + "_" + goos + "_" + goarch + ext; pl.uri() != want {
			t.Errorf("krew.yaml: %s/%s: uri %s, want %s", goos, goarch, pl.uri(), want)
		}
		if pl.bin() != bin {
			t.Errorf("krew.yaml: %s/%s: bin %q, want %q", goos, goarch, pl.bin(), bin)
		}
	}
}
