package shell_test

import (
	"fmt"

	"github.com/kubectl-informer/kubectl-informer/pkg/shell"
)

// A command the plugin suggests, with the names it came from quoted: a plain name stays as it
// is, one a shell would read otherwise (a space, a `$(...)`, a quote) becomes one word that the
// shell hands on as it is.
func Example() {
	for _, name := range []string{"web-1", "ops admin $(id)", "it's"} {
		fmt.Println("kubectl informer watch clusterrole " + shell.Quote(name))
	}
	// Output:
	// kubectl informer watch clusterrole web-1
	// kubectl informer watch clusterrole 'ops admin $(id)'
	// kubectl informer watch clusterrole 'it'\''s'
}
