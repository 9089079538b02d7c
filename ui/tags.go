package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/colline/colline/graph"
	"github.com/colline/colline/tags"
)

// TagReader is what the tag answers read: package tags' Graph, the list of tags and a dataset's
// columns (graph.TagGraph, Reader.Tags()).
type TagReader interface {
	tags.Graph
	TagList(ctx context.Context) ([]graph.TagSummary, error)
	DatasetColumns(ctx context.Context, dataset string) ([]string, error)
}

// The tag answers: GET /api/tags (every tag, its settings and sources); GET /api/tags/reach?tag=K,
// its reach per dataset (tags.ReachByDataset: each dataset's columns counted by status, and its
// indirect uses), with dataset=D the columns of D that it reaches, with whole paths
// (tags.ReachIn), with report=full everything it reaches (tags.Reach: every column, each arrival
// with its last hop; paths=true: whole paths), with format=csv the full report as a download with
// whole paths; GET /api/tags/columns?column=K… (the tags of columns, with whole paths: the
// drawing's badges).

func (s *server) tagsReady(w http.ResponseWriter) bool {
	if s.p.Tags == nil {
		fail(w, http.StatusNotImplemented, errors.New("this explorer was started without tags"))
		return false
	}
	return true
}

func (s *server) tagList(w http.ResponseWriter, r *http.Request) {
	if !s.tagsReady(w) {
		return
	}
	list, err := s.p.Tags.TagList(r.Context())
	if err != nil {
		s.failGraph(w, r, err)
		return
	}
	reply(w, map[string]any{"tags": nonNil(list)})
}

func (s *server) tagReach(w http.ResponseWriter, r *http.Request) {
	if !s.tagsReady(w) {
		return
	}
	v := r.URL.Query()
	k, err := key(v, "tag")
	if err != nil {
		s.failReq(w, r, err)
		return
	}
	format := v.Get("format")
	if format == "" {
		format = "json"
	}
	if format != "json" && format != "csv" {
		fail(w, http.StatusBadRequest, fmt.Errorf("parameter format=%q: use json or csv", format))
		return
	}
	failed := func(err error) {
		if errors.Is(err, tags.ErrBadKey) {
			fail(w, http.StatusBadRequest, err)
			return
		}
		s.failGraph(w, r, err)
	}
	report := v.Get("report")
	if report != "" && report != "full" {
		fail(w, http.StatusBadRequest, fmt.Errorf("parameter report=%q: use full, or leave it out for the reach per dataset", report))
		return
	}
	if ds := v.Get("dataset"); ds != "" && format == "json" && report == "" {
		if len(ds) > maxKeyLen {
			fail(w, http.StatusBadRequest, fmt.Errorf("parameter dataset: longer than %d bytes", maxKeyLen))
			return
		}
		cols, err := s.p.Tags.DatasetColumns(r.Context(), ds)
		if err != nil {
			s.failGraph(w, r, err)
			return
		}
		ans, err := tags.ReachIn(r.Context(), s.p.Tags, k, ds, cols, tags.Limits{})
		if err != nil {
			failed(err)
			return
		}
		reply(w, ans)
		return
	}
	if format == "json" && report == "" {
		ans, err := tags.ReachByDataset(r.Context(), s.p.Tags, k, tags.Limits{})
		if err != nil {
			failed(err)
			return
		}
		reply(w, ans)
		return
	}
	ans, err := tags.Reach(r.Context(), s.p.Tags, k, tags.Limits{})
	if err != nil {
		failed(err)
		return
	}
	if format == "json" && v.Get("paths") != "true" {
		ans.Compact() // each arrival's last hop only; paths=true: whole paths
	}
	if format == "csv" {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="colline-tag-reach.csv"`)
		w.Header().Set("X-Colline-Truncated", strconv.FormatBool(ans.Truncated))
		tags.WriteReach(w, format, ans)
		return
	}
	reply(w, ans) // not indented, as every answer of the API: a broad tag's is 6 MB indented
}

func (s *server) tagColumns(w http.ResponseWriter, r *http.Request) {
	if !s.tagsReady(w) {
		return
	}
	cols := r.URL.Query()["column"]
	switch {
	case len(cols) == 0:
		fail(w, http.StatusBadRequest, errors.New("parameter column is required"))
		return
	case len(cols) > maxStartKeys:
		fail(w, http.StatusBadRequest, fmt.Errorf("%d columns; at most %d", len(cols), maxStartKeys))
		return
	}
	for _, c := range cols {
		if c == "" || len(c) > maxKeyLen {
			fail(w, http.StatusBadRequest, fmt.Errorf("a column key is empty or longer than %d bytes", maxKeyLen))
			return
		}
	}
	cts, err := tags.Of(r.Context(), s.p.Tags, cols, tags.Limits{})
	if err != nil {
		if errors.Is(err, tags.ErrNotFound) {
			fail(w, http.StatusNotFound, err)
			return
		}
		s.failGraph(w, r, err)
		return
	}
	reply(w, map[string]any{"columns": nonNil(cts)})
}
