package ui

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/colline/colline/guard"
)

// Auth is the explorer's optional authentication. With nothing set, every request is served
// (the default address is the loopback interface). With one or more set, a request is served when
// any of them accepts it:
//   - Basic: HTTP basic authentication with BasicUser and BasicPassword (browsers ask for it);
//   - Token: "Authorization: Bearer <Token>" (scripts, the CSV export), or the cookie a browser
//     gets by opening the page once with ?token=<Token>;
//   - ProxyUserHeader: a non-empty header of that name, from a client address in ProxyTrusted
//     only (an authenticating proxy in front of the explorer: oauth2-proxy, an ingress).
type Auth struct {
	BasicUser, BasicPassword string
	Token                    string
	ProxyUserHeader          string
	ProxyTrusted             []netip.Prefix
}

// tokenCookie holds the token for a browser (HttpOnly, SameSite=Strict).
const tokenCookie = "colline_token"

func (a Auth) enabled() bool {
	return a.BasicUser != "" || a.Token != "" || a.ProxyUserHeader != ""
}

type userKey struct{}

// User is who the request was authenticated as ("" without authentication).
func User(ctx context.Context) string {
	u, _ := ctx.Value(userKey{}).(string)
	return u
}

// same compares secrets in constant time (guard.Equal).
func same(a, b string) bool { return guard.Equal(a, b) }

// presents reports whether r carries credentials of a kind a is configured for: a failed login,
// when they do not authenticate (a request with none is a first visit, not a guess).
func (a Auth) presents(r *http.Request) bool {
	if r.Header.Get("Authorization") != "" {
		return true
	}
	if a.Token != "" {
		if _, err := r.Cookie(tokenCookie); err == nil {
			return true
		}
		return r.URL.Query().Get("token") != ""
	}
	return false
}

// user returns who the request authenticates as, or an error saying why not.
func (a Auth) user(r *http.Request) (string, error) {
	if a.ProxyUserHeader != "" {
		if u := r.Header.Get(a.ProxyUserHeader); u != "" {
			if a.trusted(r.RemoteAddr) {
				return u, nil
			}
		}
	}
	if a.Token != "" {
		if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && same(strings.TrimSpace(v), a.Token) {
			return "token", nil
		}
		if c, err := r.Cookie(tokenCookie); err == nil && same(c.Value, a.Token) {
			return "token", nil
		}
	}
	if a.BasicUser != "" {
		if u, p, ok := r.BasicAuth(); ok && same(u, a.BasicUser) && same(p, a.BasicPassword) {
			return u, nil
		}
	}
	return "", errors.New("authentication required")
}

func (a Auth) trusted(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	for _, p := range a.ProxyTrusted {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// middleware lets authenticated requests through (all of them when Auth is empty). A page
// request with a valid ?token= sets the token cookie and is sent to the same page without it.
// Failed logins are throttled per client address (th): once throttled, a client is refused with
// 429 before its credentials are looked at.
func (a Auth) middleware(h http.Handler, th *guard.Throttle) http.Handler {
	if !a.enabled() {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if th.Refused(w, r, func(w http.ResponseWriter, code int, msg string) { fail(w, code, errors.New(msg)) }) {
			return
		}
		if t := r.URL.Query().Get("token"); a.Token != "" && t != "" && r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") {
			if same(t, a.Token) {
				http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: a.Token, Path: "/", HttpOnly: true,
					SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
				u := *r.URL
				q := u.Query()
				q.Del("token")
				u.RawQuery = q.Encode()
				http.Redirect(w, r, u.String(), http.StatusSeeOther)
				return
			}
		}
		user, err := a.user(r)
		if err != nil {
			if a.presents(r) {
				th.Fail(r)
			}
			if a.BasicUser != "" {
				w.Header().Set("WWW-Authenticate", `Basic realm="colline", charset="UTF-8"`)
			} else if a.Token != "" {
				w.Header().Set("WWW-Authenticate", `Bearer realm="colline"`)
			}
			fail(w, http.StatusUnauthorized, err)
			return
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, user)))
	})
}
