package ctrllog

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// ReasonLogBehind is the reason of the Error line that says the reading fell behind the logs.
const ReasonLogBehind = "LogBehind"

// behindBytes is how far from its end a followed file may be read, three checks (seconds) in a
// row, before the reading is said to be behind: a log read from its first line is behind at
// first, and catches up within seconds at the parser's speed (make bench).
const behindBytes = 8 << 20

// behind watches how far the reading is from the logs' ends: the bytes of each followed file
// not read yet, and the reconciles the join had to take before their hold was over.
type behind struct {
	mu    sync.Mutex
	files []fileLag
	// on: an Error line said so, and no Recovered line since; over counts the checks in a row
	// with a file more than behindBytes from its end; early is Join.Early at the last check,
	// earlyAt at the Error line.
	on             bool
	over           int
	early, earlyAt int
}

type fileLag struct {
	name string
	lag  *atomic.Int64
}

// file returns the counter of the bytes of the followed file name not read yet.
func (b *behind) file(name string) *atomic.Int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	lag := new(atomic.Int64)
	b.files = append(b.files, fileLag{name, lag})
	return lag
}

// check looks at the reading once (a second); early is Join.Early, maxPending its bound. It returns the line to say:
// an Error line (LogBehind) when the reading fell behind, a Recovered line when it caught up.
func (b *behind) check(now time.Time, early, maxPending int) (watch.Event, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var worst int64
	name := ""
	for _, f := range b.files {
		if v := f.lag.Load(); v > worst {
			worst, name = v, f.name
		}
	}
	joinedEarly := early > b.early
	b.early = early
	if worst > behindBytes {
		b.over++
	} else {
		b.over = 0
	}
	lagging := b.over >= 3 || joinedEarly
	switch {
	case lagging && !b.on:
		b.on, b.earlyAt = true, early
		var parts []string
		if worst > behindBytes {
			parts = append(parts, fmt.Sprintf("%s is read %.1f MiB from its end", name, float64(worst)/(1<<20)))
		}
		if early > 0 {
			parts = append(parts, fmt.Sprintf("%d reconciles were joined before their hold was over (more than %d waited): an event still on its way is not among their triggers", early, maxPending))
		}
		return watch.Event{
			Type: watch.Error,
			Time: now,
			Lifecycle: watch.LifecycleInfo{
				Verb:    "logs",
				Reason:  ReasonLogBehind,
				Message: "--controller-logs: the reading fell behind the logs: " + strings.Join(parts, "; "),
			},
		}, true
	case !lagging && b.on && worst <= behindBytes:
		b.on = false
		return watch.Event{
			Type:      watch.Recovered,
			Time:      now,
			Lifecycle: watch.LifecycleInfo{Verb: "logs", Message: fmt.Sprintf("--controller-logs: the reading caught up with the logs (%d reconciles joined early meanwhile)", early-b.earlyAt)},
		}, true
	}
	return watch.Event{}, false
}
