package guard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// DefaultWait is Limit.Wait's default.
const DefaultWait = 2 * time.Second

// Limit configures a Limiter.
type Limit struct {
	// Max is the number of requests handled at once (at least 1).
	Max int
	// Wait is the longest a request waits for a slot before its 503. Default: DefaultWait.
	Wait time.Duration
	// MaxBytes caps a request body, which the limiter reads before the request takes a slot. A
	// larger body reaches the handler as a Body whose Read fails with an *http.MaxBytesError.
	MaxBytes int64
	// Setting names the variable that sets Max, for the 503's message.
	Setting string
	// Refuse writes an answer in the door's format (JSON with the code and message).
	Refuse func(w http.ResponseWriter, code int, message string)
}

// Limiter serves at most Max requests at once. A request with a body reads it first, whole (up
// to MaxBytes, within the server's read timeout), before it takes a slot: a client dripping its
// body in holds no slot, only one of 2×Max places to read a body in, and a request finding none
// free gets 503 at once. A request then waits up to Wait for a slot, and gets 503 with
// Retry-After if none comes free. Memory is bounded by 3×Max bodies.
type Limiter struct {
	l      Limit
	slots  chan struct{}
	bodies chan struct{}
}

// NewLimiter returns the limiter l describes.
func NewLimiter(l Limit) *Limiter {
	l.Max = max(l.Max, 1)
	if l.Wait <= 0 {
		l.Wait = DefaultWait
	}
	return &Limiter{l: l, slots: make(chan struct{}, l.Max), bodies: make(chan struct{}, 2*l.Max)}
}

// Wrap returns h behind the limiter.
func (lm *Limiter) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			if !lm.readAhead(w, r) {
				return
			}
		}
		t := time.NewTimer(lm.l.Wait)
		defer t.Stop()
		select {
		case lm.slots <- struct{}{}:
			defer func() { <-lm.slots }()
		case <-t.C:
			lm.busy(w, fmt.Sprintf("busy: %d requests in progress", lm.l.Max))
			return
		case <-r.Context().Done():
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (lm *Limiter) busy(w http.ResponseWriter, msg string) {
	if lm.l.Setting != "" {
		msg += " (" + lm.l.Setting + ")"
	}
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(lm.l.Wait.Seconds()))))
	lm.l.Refuse(w, http.StatusServiceUnavailable, msg+"; retry")
}

// readAhead reads r's body into memory, outside the slots. It answers and returns false when the
// request cannot go on: no place to read a body in (503), or a body that did not arrive (408).
func (lm *Limiter) readAhead(w http.ResponseWriter, r *http.Request) bool {
	select {
	case lm.bodies <- struct{}{}:
		defer func() { <-lm.bodies }()
	default:
		lm.busy(w, fmt.Sprintf("busy: %d request bodies being read", cap(lm.bodies)))
		return false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, lm.l.MaxBytes))
	r.Body.Close()
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		r.Body = failing{err}
	case err != nil:
		// the client stopped sending (the server's read timeout, a closed connection)
		w.Header().Set("Connection", "close")
		lm.l.Refuse(w, http.StatusRequestTimeout, "the request body did not arrive in time: "+err.Error())
		return false
	default:
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return true
}

// failing is a body whose reads fail with err.
type failing struct{ err error }

func (f failing) Read([]byte) (int, error) { return 0, f.err }
func (f failing) Close() error             { return nil }
