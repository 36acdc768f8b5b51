package cmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-informer/kubectl-informer/internal/noise"
)

// NoiseFlags are the flags watch and replay share to keep noise out of human output:
// --ignore-path, --only-path and --fold.
type NoiseFlags struct {
	IgnorePaths []string
	OnlyPaths   []string
	Fold        string

	filter *noise.Filter
	fold   time.Duration // 0: off
}

// defaultFold is --fold's default interval.
const defaultFold = time.Second

// NewNoiseFlags returns the flags with their defaults.
func NewNoiseFlags() *NoiseFlags { return &NoiseFlags{Fold: defaultFold.String()} }

// AddFlags registers the flags.
func (n *NoiseFlags) AddFlags(f *pflag.FlagSet) {
	f.StringArrayVar(&n.IgnorePaths, "ignore-path", n.IgnorePaths, "A field whose changes are noise (repeatable), in --diff's path syntax with * for a map key and [*] for a list element (e.g. 'status.conditions[*].lastTransitionTime', 'metadata.annotations[\"example.com/seen\"]'): an update that changed only ignored fields is hidden from human output (counted in the summary; \"ignored\": true in -o json), and ignored fields leave --diff. Added to the default heartbeats, "+
		strings.Join(noise.DefaultIgnore, ", ")+"; --ignore-path=- turns the defaults off.")
	f.StringArrayVar(&n.OnlyPaths, "only-path", n.OnlyPaths, "Show only the updates that change this field or a field under it (repeatable; --ignore-path's syntax); the other updates are hidden from human output and counted (\"outOfFocus\": true in -o json).")
	f.StringVar(&n.Fold, "fold", n.Fold, "Fold the updates of an object in a hot loop (after its HotLoop line, until its HotLoopEnded line) into one Folded line per this interval in human output (and replay --history's alike updates into one row); off shows every update. -o json and --record never fold.")
}

// Validate parses the paths and the interval.
func (n *NoiseFlags) Validate() error {
	f, err := noise.NewFilter(n.IgnorePaths, n.OnlyPaths)
	if err != nil {
		return err
	}
	n.filter = f
	switch n.Fold {
	case "off", "false", "0":
		n.fold = 0
	case "on", "true", "":
		n.fold = defaultFold
	default:
		d, err := time.ParseDuration(n.Fold)
		if err != nil || d <= 0 {
			return fmt.Errorf(`--fold must be off (or 0) or an interval > 0 (e.g. 1s), got %q`, n.Fold)
		}
		n.fold = d
	}
	return nil
}
