package guard

import (
	"crypto/tls"
	"log/slog"
	"net/http"
	"time"
)

// Defaults of Timeouts.
const (
	DefaultHeaderTimeout  = 10 * time.Second
	DefaultReadTimeout    = 30 * time.Second
	DefaultHandleTimeout  = 30 * time.Second
	DefaultIdleTimeout    = 2 * time.Minute
	DefaultMaxHeaderBytes = 64 << 10
)

// Timeouts bound what a client may hold of a door. Zero fields take the defaults above.
type Timeouts struct {
	// Header is the time a client has to send a request's headers (http.Server.ReadHeaderTimeout):
	// a client dripping them in is cut off then.
	Header time.Duration
	// Read is the time it has to send the whole request, body included (ReadTimeout).
	Read time.Duration
	// Handle is the time a handler may take once the request is read: the door's own deadline on
	// its work (a query, a publish) should be shorter. The answer must be written within Read +
	// Handle of the headers' end (WriteTimeout), or the connection is closed.
	Handle time.Duration
	// Idle is how long a kept-alive connection may wait for its next request (IdleTimeout).
	Idle time.Duration
	// MaxHeaderBytes caps the request line and headers (431 above it; Go's default is 1 MiB).
	MaxHeaderBytes int
}

func (t Timeouts) withDefaults() Timeouts {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&t.Header, DefaultHeaderTimeout)
	def(&t.Read, DefaultReadTimeout)
	def(&t.Handle, DefaultHandleTimeout)
	def(&t.Idle, DefaultIdleTimeout)
	if t.MaxHeaderBytes <= 0 {
		t.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	return t
}

// Server returns an http.Server for h on addr with t's bounds, TLS 1.2 at least when it serves
// TLS (ServeTLS, ListenAndServeTLS), and the server's own errors (a TLS handshake refused, a
// panic) logged to log at Warn (nil: discarded).
func Server(addr string, h http.Handler, t Timeouts, log *slog.Logger) *http.Server {
	t = t.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: t.Header,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Read + t.Handle,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    t.MaxHeaderBytes,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12},
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}
