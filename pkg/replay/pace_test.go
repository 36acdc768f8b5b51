package replay

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The delay of each line is its recorded distance from the first, divided by the speed, less
// what has passed since the first was due. No wall clock.
func TestPacerDelay(t *testing.T) {
	wall := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &Pacer{Speed: 10}
	if d := p.Delay(ft0, wall); d != 0 {
		t.Errorf("first line waits %s", d)
	}
	tests := []struct {
		rec, now time.Duration // after the first line's recorded time, after it was due
		want     time.Duration
	}{
		{rec: 10 * time.Second, now: 0, want: time.Second},
		{rec: 10 * time.Second, now: 400 * time.Millisecond, want: 600 * time.Millisecond},
		{rec: 10 * time.Second, now: 2 * time.Second, want: -time.Second}, // late: due now
		{rec: 0, now: 0, want: 0},
	}
	for _, tt := range tests {
		if got := p.Delay(ft0.Add(tt.rec), wall.Add(tt.now)); got != tt.want {
			t.Errorf("recorded +%s at +%s: %s, want %s", tt.rec, tt.now, got, tt.want)
		}
	}
}

// A wait flushes first, and ends with the context; a flush error ends it too.
func TestPacerWait(t *testing.T) {
	p := &Pacer{Speed: 1}
	flushed := 0
	flush := func() error { flushed++; return nil }
	if err := p.Wait(context.Background(), ft0, flush); err != nil || flushed != 0 {
		t.Fatalf("first line: %v, %d flushes", err, flushed)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Wait(ctx, ft0.Add(time.Hour), flush); !errors.Is(err, context.Canceled) || flushed != 1 {
		t.Errorf("cancelled wait: %v, %d flushes", err, flushed)
	}
	gone := errors.New("stdout gone")
	if err := p.Wait(context.Background(), ft0.Add(time.Hour), func() error { return gone }); !errors.Is(err, gone) {
		t.Errorf("flush error: %v", err)
	}
}
