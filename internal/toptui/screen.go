package toptui

import (
	"context"
	"errors"
	"fmt"
	"io"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kubectl-informer/kubectl-informer/internal/top"
)

// Screen returns top's live table on a terminal (top.Config.Screen): keys from in, the screen
// on out.
func Screen(in io.Reader, out io.Writer) func(context.Context, top.Config) (top.Ranking, error) {
	return func(ctx context.Context, cfg top.Config) (top.Ranking, error) { return run(ctx, cfg, in, out) }
}

// run runs top's scan under the live table until q, Ctrl-C or the run's end, and returns the
// final ranking once the terminal is restored.
func run(ctx context.Context, cfg top.Config, in io.Reader, out io.Writer) (top.Ranking, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	model := New(func(dctx context.Context, obj top.ObjectRank, changed func()) *top.Drill {
		return top.StartDrill(dctx, cfg.Watch, obj.Ref, obj.Namespace, obj.Name, cfg.HotLoopUpdates, cfg.HotLoopWindow, changed)
	})
	p := tea.NewProgram(model, tea.WithAltScreen(), tea.WithInput(in), tea.WithOutput(out), tea.WithContext(ctx))
	model.SetSend(p.Send)
	cfg.Report = func(r top.Ranking) { p.Send(Ranking(r)) }
	cfg.Warn = func(string) {} // stderr would tear the screen; the summary says what matters
	cfg.Audit.Notice = cfg.Warn
	type result struct {
		r   top.Ranking
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := top.Scan(ctx, cfg)
		done <- result{r, err}
		p.Send(Done{})
	}()
	_, tuiErr := p.Run()
	cancel()
	res := <-done
	if tuiErr != nil && !errors.Is(tuiErr, tea.ErrProgramKilled) && !errors.Is(tuiErr, context.Canceled) {
		return res.r, fmt.Errorf("terminal: %w", tuiErr)
	}
	return res.r, res.err
}
