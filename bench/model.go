package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/colline/colline/events"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
)

// benchModel counts, per Spark line of the corpus and from one extraction, the lineage
// relationships graph model 1 stored for it and those model 2 stores for the same facts. Model 1
// kept one FEEDS per (source column, target column, job): the strongest role of the column edges,
// and every row-level dependency copied onto every written column. Model 2 (graph.Preview, the
// writer's own row building) keeps one FEEDS per column pair with every role and one DECIDES_ROWS
// per (column, written dataset, job).
func benchModel(r *report, evs []event) error {
	byLine := map[string][]record.Item{}
	for _, e := range evs {
		env, err := events.Decode(e.data)
		if err != nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
		lin, err := plan.Extract(env)
		if err != nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
		line, _, _ := strings.Cut(e.name, "/")
		byLine[line] = append(byLine[line], record.Item{Event: env, Lineage: lin})
	}
	lines := make([]string, 0, len(byLine))
	for l := range byLine {
		lines = append(lines, l)
	}
	sort.Strings(lines)
	for _, line := range lines {
		items := byLine[line]
		model1 := map[[3]string]bool{}
		roles, rowRoles := 0, 0
		for _, it := range items {
			job := record.JobKey(it.Event.App)
			for _, e := range it.Lineage.Edges {
				model1[[3]string{e.Source, e.Target, job}] = true
				roles += len(e.Transformations)
			}
			for _, e := range it.Lineage.RowDeps {
				rowRoles += len(e.Transformations)
				for _, w := range it.Lineage.Writes {
					if w.Key != e.Target {
						continue
					}
					for _, c := range w.Columns {
						model1[[3]string{e.Source, c.Key, job}] = true
					}
				}
			}
		}
		c, _, err := graph.Preview(items)
		if err != nil {
			return err
		}
		feeds, decides := c.Relationships["FEEDS"], c.Relationships["DECIDES_ROWS"]
		m2 := feeds + decides
		r.notef("model %s: %d events; model 1: %d FEEDS; model 2: %d relationships (%d FEEDS with %d roles, %d DECIDES_ROWS with %d roles) = %.1f%% of model 1",
			line, len(items), len(model1), m2, feeds, roles, decides, rowRoles, 100*float64(m2)/float64(len(model1)))
		r.add(row{part: "m", metric: "lineage relationships, TPC-DS " + line, value: fmt.Sprintf("%d (model 2)", m2),
			baseline: fmt.Sprintf("%d FEEDS (model 1)", len(model1)), target: "≤ 25% of model 1",
			result: fmt.Sprintf("%.1f%%", 100*float64(m2)/float64(len(model1))), met: 4*m2 <= int64(len(model1))})
	}
	return nil
}
