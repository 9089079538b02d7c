package guard

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// Equal compares two secrets in constant time: of their SHA-256 hashes, so that neither the
// content nor the length of the expected one leaks through the time a comparison takes.
func Equal(got, want string) bool {
	x, y := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(x[:], y[:]) == 1
}

// Loopback are the names of this machine a browser puts in the Host header of a door that
// listens on the loopback interface.
var Loopback = []string{"localhost", "127.0.0.1", "::1"}

// Hosts are the names a door answers to, matched against the Host header without its port, case
// and a trailing dot aside. Empty: any name.
//
// A door on the loopback interface needs them: a web page can point a name it controls at
// 127.0.0.1 (DNS rebinding) and read what the door answers as same-origin, since the browser sees
// the page's own name; the Host header is that name, which the door then refuses.
type Hosts []string

// Allow reports whether host (a Host header: name, name:port, [v6]:port) is one of hs.
func (hs Hosts) Allow(host string) bool {
	if len(hs) == 0 {
		return true
	}
	name := hostName(host)
	for _, h := range hs {
		if hostName(h) == name {
			return true
		}
	}
	return false
}

// hostName is the name of a Host header: without port and brackets, lower case, no trailing dot.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// Check returns an error naming the Host header when the door does not answer to it.
func (hs Hosts) Check(r *http.Request) error {
	if hs.Allow(r.Host) {
		return nil
	}
	return fmt.Errorf("this server does not answer to the name %q (it answers to %s); a page that points its own name at it is refused", r.Host, strings.Join(hs, ", "))
}

// crossOrigin is net/http's CSRF protection: Sec-Fetch-Site, else Origin against Host.
var crossOrigin = http.NewCrossOriginProtection()

// CrossOrigin returns an error for a browser's cross-origin request, whatever its method: the
// rule of net/http's CrossOriginProtection (a Sec-Fetch-Site other than same-origin or none, else
// an Origin whose host is not the Host header), which checks only the methods that change
// things, applied to reads as well, so that a page on another origin can neither post to a door
// with the browser's cookies or basic credentials (CSRF) nor read what it serves. A request that
// carries neither header (curl, a script, a producer) is no browser's and passes.
func CrossOrigin(r *http.Request) error {
	x := r.WithContext(r.Context()) // a shallow copy
	x.Method = http.MethodPost
	if err := crossOrigin.Check(x); err != nil {
		return fmt.Errorf("a cross-origin request from a web page is refused (Origin %q, Sec-Fetch-Site %q)", r.Header.Get("Origin"), r.Header.Get("Sec-Fetch-Site"))
	}
	return nil
}
