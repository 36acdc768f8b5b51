package cmd

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// validateDisplay checks the output flags watch and replay share.
func validateDisplay(output, color, diff, timestamps string, hotLoopUpdates int, hotLoopWindow time.Duration) error {
	if err := printer.ValidateOutput(output); err != nil {
		return err
	}
	switch color {
	case "auto", "always", "never":
	default:
		return fmt.Errorf("--color must be one of auto, always, never; got %q", color)
	}
	switch diff {
	case "", "inline", "full":
	default:
		return fmt.Errorf("--diff must be inline or full, got %q", diff)
	}
	switch timestamps {
	case "", "absolute", "relative", "none":
	default:
		return fmt.Errorf("--timestamps must be one of absolute, relative, none; got %q", timestamps)
	}
	if hotLoopUpdates < 0 {
		return fmt.Errorf("--hot-loop-updates must be >= 0, got %d", hotLoopUpdates)
	}
	if hotLoopWindow <= 0 {
		return fmt.Errorf("--hot-loop-window must be > 0, got %s", hotLoopWindow)
	}
	return nil
}

// wantColor turns --color into a decision: always, never, or auto (a terminal, NO_COLOR unset).
func wantColor(color string, out io.Writer) bool {
	switch color {
	case "always":
		return true
	case "auto":
		return printers.AllowsColorOutput(out)
	}
	return false
}

// addTypesFlag registers --types, which watch and replay share, with its completion; more is
// what the command adds to the help text.
func addTypesFlag(cmd *cobra.Command, types *[]string, more string) {
	cmd.Flags().StringSliceVar(types, "types", *types, "Only these line types, comma-separated, any case (e.g. Updated,Relist): "+typeNames()+
		". Naming Bookmark or Reconciled also shows them in human output, where Informer is the # header line."+more)
	_ = cmd.RegisterFlagCompletionFunc("types", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		var names []string
		for _, t := range printer.KnownTypes {
			names = append(names, string(t))
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
}

// parseTypes turns --types into the set of line types to show; nil (every type) when empty.
func parseTypes(types []string) (map[watch.Type]bool, error) {
	if len(types) == 0 {
		return nil, nil
	}
	set := map[watch.Type]bool{}
	for _, t := range types {
		t = strings.TrimSpace(t)
		i := slices.IndexFunc(printer.KnownTypes, func(k watch.Type) bool { return strings.EqualFold(string(k), t) })
		if i < 0 {
			return nil, fmt.Errorf("unknown type %q in --types; known types: %s", t, typeNames())
		}
		set[printer.KnownTypes[i]] = true
	}
	return set, nil
}

func typeNames() string {
	var names []string
	for _, t := range printer.KnownTypes {
		names = append(names, string(t))
	}
	return strings.Join(names, ", ")
}
