package printer

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
)

// ProgressLine is the single updating line of a long initial list or relist, for a terminal's
// stderr: rewritten in place, cut to the terminal's width. The command decides whether there is
// one (a terminal); a nil ProgressLine does nothing. Clear is safe to call from the goroutine
// that writes stdout.
type ProgressLine struct {
	w     io.Writer
	width int

	mu    sync.Mutex
	shown bool
}

// NewProgressLine returns the line for a terminal of width columns.
func NewProgressLine(w io.Writer, width int) *ProgressLine {
	return &ProgressLine{w: w, width: width}
}

// Update shows the lists running now, or clears the line when none is.
func (p *ProgressLine) Update(lists []apistats.Progress) {
	if p == nil {
		return
	}
	if len(lists) == 0 {
		p.Clear()
		return
	}
	parts := make([]string, 0, len(lists))
	for _, l := range lists {
		kind := "listing"
		if l.Streaming {
			kind = "streaming list of"
		}
		s := fmt.Sprintf("%s %s: %d objects", kind, l.Resource, l.Objects)
		if !l.Streaming {
			s += fmt.Sprintf(", %d pages", l.Pages)
		}
		parts = append(parts, s+fmt.Sprintf(", %s, %s", byteSize(l.Bytes), l.Elapsed.Round(100*time.Millisecond)))
	}
	text := []rune(Escape(strings.Join(parts, "; ")))
	if len(text) > p.width-1 { // a wrapped line could not be rewritten in place
		text = text[:p.width-1]
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = io.WriteString(p.w, eraseLine+string(text))
	p.shown = true
}

// Clear erases the line if it is shown.
func (p *ProgressLine) Clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		_, _ = io.WriteString(p.w, eraseLine)
		p.shown = false
	}
}

// eraseLine takes the cursor back to the start of the line and erases it.
const eraseLine = "\r\x1b[K"
