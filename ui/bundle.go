package ui

import (
	"bytes"
	"embed"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/colline/colline/neo4jbrowser"
)

// The page is a bundle built from ui/web by `make ui-bundle` (npm ci, TypeScript checks, esbuild)
// into ui/bundle/app/, which git ignores. go:embed takes whatever is there: a plain `go build` of
// a clean clone embeds only placeholder.html, which the explorer then serves in place of the page
// (saying how to build it), so building Go never needs npm. The Makefile's colline target builds
// the bundle first; Built reports which one a binary has.
//
//go:embed all:bundle
var bundle embed.FS

// Built reports whether the binary holds the page's bundle (else the placeholder).
func Built() bool {
	_, err := fs.Stat(bundle, "bundle/app/index.html")
	return err == nil
}

func bundleHandler() http.Handler {
	if !Built() {
		page, _ := bundle.ReadFile("bundle/placeholder.html")
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(page)
		})
	}
	app, _ := fs.Sub(bundle, "bundle/app")
	files := http.FileServerFS(app)
	index, _ := fs.ReadFile(app, "index.html")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Assets have hashed names; index.html must be fetched anew after an upgrade.
		if p := strings.TrimPrefix(r.URL.Path, "/"); p != "" && p != "index.html" {
			if _, err := fs.Stat(app, p); err == nil {
				w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
				files.ServeHTTP(w, r)
				return
			}
		}
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(index))
	})
}

// The Neo4j Browser style and guide (package neo4jbrowser), fetched by Browser from its own origin:
// open to every origin (they hold no data), and not behind the explorer's authentication.
const (
	styleFile = "colline.grass"
	guideFile = "guide.html"
)

func browserFile(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		cors(w)
		switch name {
		case styleFile:
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Write(neo4jbrowser.Style())
		case guideFile:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			scheme := "http"
			if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
				scheme = "https"
			}
			neo4jbrowser.Guide(w, scheme+"://"+r.Host)
		}
	}
}

// browserPreflight answers the CORS preflight Browser sends (its fetch sets custom headers).
func browserPreflight(w http.ResponseWriter, r *http.Request) {
	cors(w)
	w.Header().Set("Access-Control-Allow-Methods", "GET, OPTIONS")
	w.Header().Set("Access-Control-Allow-Headers", "Content-Type, X-Ajax-Browser-Auth, X-Stream, Cache-Control, Pragma")
	w.Header().Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

func cors(w http.ResponseWriter) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
}
