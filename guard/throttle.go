package guard

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// Defaults of Throttle.
const (
	DefaultFailures = 10
	DefaultPer      = time.Minute
	// maxAddresses bounds the addresses a Throttle remembers; beyond, new ones share one account.
	maxAddresses = 10_000
)

// Throttle slows down guessing of credentials: each client address may fail Failures times at
// once, then once every Per/Failures (a token bucket: after 10 quick failures, one try every 6 s
// by default). A throttled address is refused (429 with Retry-After) before its credentials are
// even checked, so it cannot go on guessing. IPv6 addresses count by /64 (a host has a whole
// one). Behind a proxy every client shares the proxy's address. The zero value uses the defaults.
type Throttle struct {
	Failures int           // Default: DefaultFailures.
	Per      time.Duration // Default: DefaultPer.

	mu    sync.Mutex
	slots map[netip.Prefix]*bucket
	now   func() time.Time // tests
}

type bucket struct {
	tokens float64
	at     time.Time
}

func (t *Throttle) params() (float64, time.Duration) {
	n, per := t.Failures, t.Per
	if n <= 0 {
		n = DefaultFailures
	}
	if per <= 0 {
		per = DefaultPer
	}
	return float64(n), per
}

func (t *Throttle) clock() time.Time {
	if t.now != nil {
		return t.now()
	}
	return time.Now()
}

// account is the address a request is counted under.
func account(remote string) netip.Prefix {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Prefix{}
	}
	ip = ip.Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, _ := ip.Prefix(bits)
	return p
}

// refill brings b's tokens up to now; call with t.mu held.
func (t *Throttle) refill(b *bucket, now time.Time) {
	n, per := t.params()
	b.tokens = min(n, b.tokens+now.Sub(b.at).Seconds()*n/per.Seconds())
	b.at = now
}

// Wait returns how long the client of r must wait before its next try (0: it may try now).
func (t *Throttle) Wait(r *http.Request) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.slots[account(r.RemoteAddr)]
	if b == nil {
		return 0
	}
	t.refill(b, t.clock())
	if b.tokens >= 1 {
		return 0
	}
	n, per := t.params()
	return time.Duration((1 - b.tokens) * float64(per) / n)
}

// Fail counts a failed login of the client of r.
func (t *Throttle) Fail(r *http.Request) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clock()
	if t.slots == nil {
		t.slots = map[netip.Prefix]*bucket{}
	}
	key := account(r.RemoteAddr)
	b := t.slots[key]
	if b == nil {
		n, _ := t.params()
		if len(t.slots) >= maxAddresses {
			for k, old := range t.slots { // forget the addresses that are back to full
				if t.refill(old, now); old.tokens >= n {
					delete(t.slots, k)
				}
			}
			if len(t.slots) >= maxAddresses {
				key = netip.Prefix{} // still full: the newcomers share one account
			}
		}
		if b = t.slots[key]; b == nil {
			b = &bucket{tokens: n, at: now}
			t.slots[key] = b
		}
	}
	t.refill(b, now)
	b.tokens--
}

// Refused answers 429 with Retry-After (through refuse, in the door's format) and returns true
// when the client of r must wait before its next try.
func (t *Throttle) Refused(w http.ResponseWriter, r *http.Request, refuse func(w http.ResponseWriter, code int, message string)) bool {
	wait := t.Wait(r)
	if wait <= 0 {
		return false
	}
	secs := max(1, int((wait+time.Second-1)/time.Second))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	refuse(w, http.StatusTooManyRequests, fmt.Sprintf("too many failed logins from this address; retry in %d s", secs))
	return true
}
