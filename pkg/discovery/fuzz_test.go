package discovery

import (
	"strings"
	"testing"
)

// FuzzResolve: no resource argument makes resolution panic, and a failure is always an error
// with a message fit for one line.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"deploy", "deployments.v1.apps", "Deployment.apps", "cm", "", ".", "..", "a.b.c.d", "v1.", "/", "wdg,cm", "Ü", "\x1b[31m", strings.Repeat("a", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		r, _ := newResolver(append(coreResources(), widgets())...)
		res, err := r.Resolve(arg)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("empty error for %q", arg)
			}
			return
		}
		if res.Resource == "" || res.Version == "" || res.Kind == "" {
			t.Fatalf("Resolve(%q) = %+v without error", arg, res)
		}
		_, _ = r.ResolveList(arg + "," + arg)
	})
}
