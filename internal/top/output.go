package top

import (
	"fmt"
	"io"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
)

// output writes the rankings to Config.Out: a plain table, or NDJSON lines, per interval;
// skipped resources named once on ErrOut.
type output struct {
	cfg         Config
	skippedSaid int
	jsonSkipped int
	err         error
}

func (t *output) report(r Ranking) {
	t.saySkipped(r)
	t.write(func(w io.Writer) error {
		if t.cfg.JSON {
			return WriteJSON(w, r, t.cfg.Limit, false, &t.jsonSkipped)
		}
		if err := WriteText(w, r, t.cfg.Limit); err != nil {
			return err
		}
		_, err := fmt.Fprintln(w)
		return err
	})
}

// saySkipped names on ErrOut, once, each resource skipped (human output; JSON has TopSkipped).
func (t *output) saySkipped(r Ranking) {
	if t.cfg.JSON {
		return
	}
	for ; t.skippedSaid < len(r.Skipped); t.skippedSaid++ {
		s := r.Skipped[t.skippedSaid]
		fmt.Fprintf(t.cfg.ErrOut, "skipped %s: %s\n", s.Resource, printer.Escape(s.Message))
	}
}

// final writes the final ranking, with the drill-in commands.
func (t *output) final(r Ranking) error {
	t.saySkipped(r)
	t.write(func(w io.Writer) error {
		if t.cfg.JSON {
			return WriteJSON(w, r, t.cfg.Limit, true, &t.jsonSkipped)
		}
		fmt.Fprintln(w, "final ranking:")
		return WriteFinal(w, r, t.cfg.Limit)
	})
	return t.err
}

func (t *output) write(f func(io.Writer) error) {
	if t.err != nil {
		return
	}
	t.err = f(t.cfg.Out)
}
