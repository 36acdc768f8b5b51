package cmd

import (
	"fmt"
	"io"
	"time"

	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
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
