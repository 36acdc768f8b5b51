package replay

import (
	"context"
	"time"
)

// Pacer spaces out the lines of a recording as they were recorded, Speed times faster (1: real
// time). The first line it is asked about sets the start.
type Pacer struct {
	Speed float64

	wall time.Time // when the first line was due
	rec  time.Time // and its recorded time
}

// Delay is how long a line recorded at `at` must wait at `now`; <= 0 when it is due.
func (p *Pacer) Delay(at, now time.Time) time.Duration {
	if p.wall.IsZero() {
		p.wall, p.rec = now, at
		return 0
	}
	return p.wall.Add(time.Duration(float64(at.Sub(p.rec)) / p.Speed)).Sub(now)
}

// Wait blocks until a line recorded at `at` is due. Before a wait it calls flush (so that what
// is due is seen while it waits); flush's error, or ctx's when it ends first, is returned.
func (p *Pacer) Wait(ctx context.Context, at time.Time, flush func() error) error {
	wait := p.Delay(at, time.Now())
	if wait <= 0 {
		return nil
	}
	if err := flush(); err != nil {
		return err
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
