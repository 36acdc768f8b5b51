package replay

import (
	"fmt"
	"strings"
	"time"
)

// Bound is one end of the span of a recording that is replayed (--since, --until): an absolute
// time, a clock time, or an offset from the recording's first event. Resolve fixes it once that
// event is known.
type Bound struct {
	set    bool
	at     time.Time     // absolute, or resolved
	offset time.Duration // after the first event
	clock  *time.Time    // a time of day, local time
	rel    bool
}

var clockLayouts = []string{"15:04:05", "15:04:05.000", "15:04:05.000000", "15:04:05.000000000", "15:04"}

// ParseBound reads a bound: an RFC 3339 time, a clock time as human output shows it (15:04:05),
// or a duration after the recording's first event (2m). "" is no bound. name is the flag the
// errors name (--since).
func ParseBound(name, s string) (Bound, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Bound{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return Bound{set: true, at: t}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return Bound{}, fmt.Errorf("%s must be a time or a duration >= 0 after the recording's first event, got %s", name, s)
		}
		return Bound{set: true, offset: d, rel: true}, nil
	}
	for _, layout := range clockLayouts {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return Bound{set: true, clock: &t}, nil
		}
	}
	return Bound{}, fmt.Errorf("%s %q is neither an RFC 3339 time (2026-11-21T05:30:00Z), a clock time (05:30:00) nor a duration (2m)", name, s)
}

// IsSet reports whether the bound was given.
func (b *Bound) IsSet() bool { return b.set }

// At is the bound's time: valid once resolved (always, for an absolute time).
func (b *Bound) At() time.Time { return b.at }

// Resolve fixes a relative or clock bound against the recording's first event: a clock time
// is on that event's day (local time), or the next day if earlier than the event.
func (b *Bound) Resolve(first time.Time) {
	switch {
	case b.rel:
		b.at, b.rel = first.Add(b.offset), false
	case b.clock != nil:
		f := first.Local()
		c := *b.clock
		at := time.Date(f.Year(), f.Month(), f.Day(), c.Hour(), c.Minute(), c.Second(), c.Nanosecond(), time.Local)
		if at.Before(f.Truncate(time.Second)) {
			at = at.AddDate(0, 0, 1)
		}
		b.at, b.clock = at, nil
	}
}
