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

// A body read ahead must come at BodyMinRate bytes a second at least, after BodyGrace (a client
// dripping its body in is cut off within seconds, not at the end of the read timeout), and whole
// within Limit.Read: nginx's client_body_timeout and Apache's mod_reqtimeout MinRate do the same.
const (
	BodyGrace   = 2 * time.Second
	BodyMinRate = 32 << 10
)

// Limit configures a Limiter.
type Limit struct {
	// Max is the number of requests handled at once (at least 1).
	Max int
	// Wait is the longest a request waits for a slot before its 503. Default: DefaultWait.
	Wait time.Duration
	// MaxBytes caps a request body, which the limiter reads before the request takes a slot. A
	// larger body reaches the handler as a Body whose Read fails with an *http.MaxBytesError.
	MaxBytes int64
	// Read is the longest a body may take to arrive (the server's Timeouts.Read). Default:
	// DefaultReadTimeout.
	Read time.Duration
	// Setting names the variable that sets Max, for the 503's message.
	Setting string
	// Refuse writes an answer in the door's format (JSON with the code and message).
	Refuse func(w http.ResponseWriter, code int, message string)
}

// Limiter serves at most Max requests at once. A request with a body reads it first, whole (up
// to MaxBytes, at BodyMinRate at least, within Read), before it takes a slot: a client dripping
// its body in holds no slot, only one of 2×Max places to read a body in, for a few seconds, and a
// request finding none free gets 503 with Retry-After at once. A request then waits up to Wait for a slot, and gets 503 with
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
	if l.Read <= 0 {
		l.Read = DefaultReadTimeout
	}
	return &Limiter{l: l, slots: make(chan struct{}, l.Max), bodies: make(chan struct{}, 2*l.Max)}
}

// Wrap returns h behind the limiter.
func (lm *Limiter) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		release, code := lm.Enter(w, r)
		if code != 0 {
			return
		}
		defer release()
		h.ServeHTTP(w, r)
	})
}

// Enter reads r's body ahead and takes a slot for r; the caller serves r, then calls release.
// When r cannot be served, Enter has answered it and returns the status it answered (503: busy;
// 408: the body did not arrive), or -1 when the client went away while it waited.
func (lm *Limiter) Enter(w http.ResponseWriter, r *http.Request) (release func(), code int) {
	if r.Body != nil && r.Body != http.NoBody {
		if code := lm.readAhead(w, r); code != 0 {
			return nil, code
		}
	}
	t := time.NewTimer(lm.l.Wait)
	defer t.Stop()
	select {
	case lm.slots <- struct{}{}:
		return func() { <-lm.slots }, 0
	case <-t.C:
		lm.busy(w, fmt.Sprintf("busy: %d requests in progress", lm.l.Max))
		return nil, http.StatusServiceUnavailable
	case <-r.Context().Done():
		return nil, -1
	}
}

func (lm *Limiter) busy(w http.ResponseWriter, msg string) {
	if lm.l.Setting != "" {
		msg += " (" + lm.l.Setting + ")"
	}
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(lm.l.Wait.Seconds()))))
	lm.l.Refuse(w, http.StatusServiceUnavailable, msg+"; retry")
}

// readAhead reads r's body into memory, outside the slots. It answers and returns the status when
// the request cannot go on: no place to read a body in (503), or a body that did not arrive (408).
func (lm *Limiter) readAhead(w http.ResponseWriter, r *http.Request) int {
	select {
	case lm.bodies <- struct{}{}:
		defer func() { <-lm.bodies }()
	default:
		lm.busy(w, fmt.Sprintf("busy: %d request bodies being read", cap(lm.bodies)))
		return http.StatusServiceUnavailable
	}
	body, err := lm.read(w, r)
	r.Body.Close()
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		r.Body = failing{err}
	case err != nil:
		// the client stopped sending (the server's read timeout, a closed connection)
		w.Header().Set("Connection", "close")
		lm.l.Refuse(w, http.StatusRequestTimeout, "the request body did not arrive in time: "+err.Error())
		return http.StatusRequestTimeout
	default:
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return 0
}

// read reads r's body, up to MaxBytes, moving the connection's read deadline along as the body
// comes: BodyGrace plus the time BodyMinRate needs for what came so far, and never beyond Read.
// (Without a deadline to set, as under httptest's recorder, the server's own read timeout rules.)
func (lm *Limiter) read(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rc := http.NewResponseController(w)
	start := time.Now()
	last := start.Add(lm.l.Read)
	src := http.MaxBytesReader(w, r.Body, lm.l.MaxBytes)
	var buf bytes.Buffer
	chunk := make([]byte, 32<<10)
	for {
		due := start.Add(BodyGrace + time.Duration(float64(buf.Len())/BodyMinRate*float64(time.Second)))
		if due.After(last) {
			due = last
		}
		rc.SetReadDeadline(due)
		n, err := src.Read(chunk)
		buf.Write(chunk[:n])
		if err == io.EOF {
			return buf.Bytes(), nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Refusing marks the answer to r, refused before its body was read, as the connection's last:
// the server then answers at once, instead of first reading (to discard) a body that a slow
// client may never finish.
func Refusing(w http.ResponseWriter, r *http.Request) {
	if r.Body != nil && r.Body != http.NoBody {
		w.Header().Set("Connection", "close")
	}
}

// failing is a body whose reads fail with err.
type failing struct{ err error }

func (f failing) Read([]byte) (int, error) { return 0, f.err }
func (f failing) Close() error             { return nil }
