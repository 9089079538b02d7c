package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/colline/colline/events"
	"github.com/colline/colline/openlineage/alias"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/process"
)

// Event is one decoded event, its lineage and where it was read from.
type Event struct {
	Source  string // file name, with "#n" (1-based) when the file holds several events
	Env     *events.Envelope
	Lineage *plan.Lineage
}

// Load reads every event of paths (files or directories) in order. It reads all of them even
// when some fail: it returns the events it could read and one error per bad file or event, each
// naming the file, the event's position in it, and what was wrong.
func Load(paths []string) ([]Event, error) {
	return LoadContext(context.Background(), paths)
}

// LoadContext is Load that stops between events once ctx ends, returning ctx's error. Kafka
// topics are keyed by the clusters of COLLINE_KAFKA_CLUSTERS, as the consumer keys them.
func LoadContext(ctx context.Context, paths []string) ([]Event, error) {
	if len(paths) == 0 {
		return nil, errors.New("no input: give event files or directories")
	}
	clusters, err := alias.ParseClusters(os.Getenv("COLLINE_KAFKA_CLUSTERS"))
	if err != nil {
		return nil, fmt.Errorf("COLLINE_KAFKA_CLUSTERS: %w", err)
	}
	var out []Event
	var errs []error
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		files, err := expand(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range files {
			evs, err := loadFile(ctx, f, clusters)
			out = append(out, evs...)
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	return out, errors.Join(errs...)
}

// loadUntil is LoadContext, returning as soon as ctx ends (Ctrl-C), even in the middle of one
// event's extraction, which has no cancellation of its own: the command exits right after, which
// ends the extraction too.
func loadUntil(ctx context.Context, paths []string) ([]Event, error) {
	type result struct {
		evs []Event
		err error
	}
	done := make(chan result, 1)
	go func() {
		evs, err := LoadContext(ctx, paths)
		done <- result{evs, err}
	}()
	select {
	case r := <-done:
		return r.evs, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("interrupted: %w", ctx.Err())
	}
}

// expand returns p itself if it is a file, else the event files below the directory p.
func expand(p string) ([]string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{p}, nil
	}
	var files []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(d.Name(), ".json") || strings.HasSuffix(d.Name(), ".jsonl")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no *.json or *.jsonl files in this directory", p)
	}
	slices.Sort(files)
	return files, nil
}

// loadFile reads the JSON values of one file and runs each through process.Step, as the consumer
// would: the same limits, decoding, extraction and graph checks.
func loadFile(ctx context.Context, name string, clusters alias.Clusters) ([]Event, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	raws, err := process.Split(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (a LineageLogger log must be written with the layout %%m%%n: one JSON record a line)", name, err)
	}
	var out []Event
	var errs []error
	for i, raw := range raws {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		src := name
		if len(raws) > 1 {
			src = fmt.Sprintf("%s#%d", name, i+1)
		}
		// a LineageLogger record without a timestamp (hive.in.test) is stamped with the file's time
		// Kafka topics are named by the consumer's clusters (COLLINE_KAFKA_CLUSTERS), so that a
		// replay gives the keys the consumer gives
		it, err := process.Step{LineageLog: events.LineageLogOptions{Time: st.ModTime()}, Clusters: clusters}.Item(raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w (the consumer would dead-letter it as %s)", src, err, process.Reason(err)))
			continue
		}
		out = append(out, Event{Source: src, Env: it.Event, Lineage: it.Lineage})
	}
	return out, errors.Join(errs...)
}
