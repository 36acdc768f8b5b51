package top

import (
	"context"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// follower keeps a full informer (a Drill) on each of the first n objects of the ranking that
// were written, started as an object enters them and stopped as it leaves, so that their rows
// can say the values the newest update changed, which metadata-only informers cannot see.
type follower struct {
	n          int
	base       watch.Config
	hotUpdates int
	hotWindow  time.Duration
	drills     map[objectKey]*followed
}

type followed struct {
	drill *Drill
	stop  context.CancelFunc
}

func newFollower(n int, base watch.Config, hotUpdates int, hotWindow time.Duration) *follower {
	return &follower{n: n, base: base, hotUpdates: hotUpdates, hotWindow: hotWindow, drills: map[objectKey]*followed{}}
}

// update starts and stops drills for r's first objects and fills in their Last* fields.
func (f *follower) update(ctx context.Context, r *Ranking) {
	if f == nil || f.n <= 0 {
		return
	}
	keep := map[objectKey]bool{}
	for i := range r.Objects {
		o := &r.Objects[i]
		if len(keep) == f.n || o.Writes == 0 {
			break
		}
		if o.Ref.Resource == "" {
			continue
		}
		k := objectKey{o.Resource, o.Namespace, o.Name}
		keep[k] = true
		fd := f.drills[k]
		if fd == nil && ctx.Err() != nil {
			continue // the run is over: what is followed already still says its last update
		}
		if fd == nil {
			dctx, stop := context.WithCancel(ctx)
			fd = &followed{drill: StartDrill(dctx, f.base, o.Ref, o.Namespace, o.Name, f.hotUpdates, f.hotWindow, func() {}), stop: stop}
			f.drills[k] = fd
		}
		o.LastBy, o.LastChanges = fd.drill.Last()
	}
	for k, fd := range f.drills {
		if !keep[k] {
			fd.stop()
			delete(f.drills, k)
		}
	}
}

// stop stops every drill.
func (f *follower) stop() {
	if f == nil {
		return
	}
	for k, fd := range f.drills {
		fd.stop()
		delete(f.drills, k)
	}
}
