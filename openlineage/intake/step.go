package intake

import (
	"errors"
	"path"
	"strings"
	"time"

	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
)

// Step is the processing step of an OpenLineage event (a RunEvent, JobEvent or DatasetEvent, as
// producers' transports send them): the size and nesting limits, validation against the spec's
// schemas, openlineage.Event.Lineage, the edge budget and record.Check. Its errors are permanent,
// as process.Step's, and process.Reason names their kind. An event over the edge budget keeps its inputs and outputs
// without column lineage (plan.Lineage.OverBudget), as a plan over budget does.
//
// An event that breaks the core schema, or a facet colline maps (openlineage.Maps), fails with
// the *openlineage.InvalidError naming every problem (process.ReasonInvalidOpenLineage). Problems
// confined to facets colline does not read (openlineage-spark's dataSource facet gives a
// namespace where the spec wants a URI) leave the lineage as it is: the event is taken, and
// Ignored hears of each such facet.
type Step struct {
	Validator *openlineage.Validator // Required.
	Names     openlineage.Names      // How dataset identities become keys (aliases).
	MaxBytes  int                    // As process.Step.MaxBytes. Default: process.DefaultMaxBytes.
	// Edges bounds the column edges and row-level dependencies plus their transformations of one
	// event, as plan.Budget.Edges does for a plan (over it: table-level lineage only). Default:
	// plan.DefaultBudget.Edges.
	Edges   int
	Observe func(stage string, d time.Duration) // As process.Step.Observe.
	// Ignored, when set, receives the schema (the facet schema's file name without .json, such
	// as DatasourceDatasetFacet, or OpenLineage for the core schema) of each problem of a facet
	// colline does not read, in an event it takes.
	Ignored func(schema string, p openlineage.Problem)
}

// Item turns one OpenLineage event into a checked item.
func (s Step) Item(value []byte) (record.Item, error) {
	if err := process.Limits(value, s.MaxBytes); err != nil {
		return record.Item{}, err
	}
	if err := process.Depth(value); err != nil {
		return record.Item{}, err
	}
	start := time.Now()
	e, err := s.decode(value)
	s.observe(process.StageDecode, start)
	if err != nil {
		return record.Item{}, err
	}
	start = time.Now()
	defer s.observe(process.StageExtract, start)
	lin, err := e.Lineage(s.Names)
	if err != nil {
		return record.Item{}, err
	}
	limit := s.Edges
	if limit <= 0 {
		limit = plan.DefaultBudget.Edges
	}
	n := 0
	for _, list := range [][]plan.Edge{lin.Edges, lin.RowDeps} {
		for _, x := range list {
			n += 1 + len(x.Transformations)
		}
	}
	if n > limit {
		// as a plan over budget: the run, its inputs and outputs, without column lineage
		lin.Edges, lin.RowDeps = nil, nil
		lin.OverBudget = &plan.TooComplexError{Budget: plan.BudgetEdges, Figure: n, Limit: limit, Exact: true}
	}
	it := record.Item{OpenLineage: Reported(e), Lineage: lin}
	if err := record.Check(&it); err != nil {
		return record.Item{}, err
	}
	return it, nil
}

// Reported is what the graph keeps of an OpenLineage event's job and run.
func Reported(e *openlineage.Event) *record.OpenLineage {
	o := &record.OpenLineage{Kind: string(e.Kind), EventType: e.EventType, EventTime: e.EventTime, Producer: e.Producer}
	switch {
	case e.Job != nil:
		o.JobNamespace, o.JobName = e.Job.Namespace, e.Job.Name
	case e.Dataset != nil:
		// a DatasetEvent's column lineage is the dataset's own definition (a view's, say)
		o.JobNamespace, o.JobName = e.Dataset.Namespace, e.Dataset.Name
	}
	if e.Run != nil {
		o.RunID = e.Run.RunID
		if p, err := e.Run.Parent(); err == nil && p != nil {
			o.Parent = &record.ParentRun{RunID: p.RunID, JobNamespace: p.JobNamespace, JobName: p.JobName}
		}
	}
	return o
}

// decode validates and decodes value, ignoring the problems of facets colline does not read.
func (s Step) decode(value []byte) (*openlineage.Event, error) {
	_, err := s.Validator.Validate(value)
	var inv *openlineage.InvalidError
	if errors.As(err, &inv) {
		for _, p := range inv.Problems {
			if f := openlineage.FacetOf(p.Location); f == "" || openlineage.Maps(f) {
				return nil, err
			}
		}
		if s.Ignored != nil {
			for _, p := range inv.Problems {
				s.Ignored(strings.TrimSuffix(path.Base(p.Schema), ".json"), p)
			}
		}
	} else if err != nil {
		return nil, err
	}
	return openlineage.Decode(value)
}

func (s Step) observe(stage string, start time.Time) {
	if s.Observe != nil {
		s.Observe(stage, time.Since(start))
	}
}
