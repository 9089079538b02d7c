package ingest

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is a capped exponential backoff with jitter: attempt n waits a random duration between
// half and all of min(Min * 2^n, Max).
type Backoff struct {
	Min time.Duration // Default: 200ms.
	Max time.Duration // Default: 30s.
}

// DefaultBackoff is the backoff of transient failures.
var DefaultBackoff = Backoff{Min: 200 * time.Millisecond, Max: 30 * time.Second}

// Delay returns the wait before retry number attempt (0 for the first retry).
func (b Backoff) Delay(attempt int) time.Duration {
	if b.Max <= 0 {
		return 0
	}
	d := b.Max
	if attempt < 32 && b.Min > 0 && b.Min<<attempt < b.Max && b.Min<<attempt > 0 {
		d = b.Min << attempt
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// sleep waits for d or until ctx ends, and reports whether the wait completed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
