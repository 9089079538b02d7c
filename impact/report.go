package impact

import (
	"sort"

	"github.com/colline/colline/plan"
)

// Exit codes of `colline impact` (besides 1, an error, and 2, a usage error).
const (
	ExitOK       = 0 // no change breaks (or, with FailOnAlter, alters) anything downstream
	ExitBreaking = 3 // a change removes or retypes a column, or stops writing a dataset, that something downstream reads
	ExitAlters   = 4 // FailOnAlter only: a change alters the values or rows of something downstream
)

// When `colline impact` fails (exits non-zero).
const (
	FailOnBreaking = "breaking" // default
	FailOnAlter    = "alter"
	FailOnNever    = "never"
)

// Downstream is a column that a change reaches, as graph.Reader.Reach found it.
type Downstream struct {
	Column  string   `json:"column"`
	Dataset string   `json:"dataset"`
	Hops    int      `json:"hops"`
	Jobs    []string `json:"jobs"` // the job of each lineage step on the way
}

// Reached is what a change reaches downstream.
type Reached struct {
	Change
	Before     []Role       `json:"before,omitempty"`
	After      []Role       `json:"after,omitempty"`
	Downstream []Downstream `json:"downstream"`
	Datasets   []string     `json:"downstreamDatasets"`
	Jobs       []string     `json:"downstreamJobs"` // the jobs that read what the change affects (first step on each path)
}

// Role is a transformation as the report shows it.
type Role struct {
	Role    string `json:"role"` // TYPE/SUBTYPE
	Masking bool   `json:"masking,omitempty"`
	Expr    string `json:"expr,omitempty"`
}

// Report is the impact of a change: its lineage diff and what each change reaches downstream.
type Report struct {
	Job     string    `json:"job,omitempty"` // the job the lineage is compared for ("" = every job writing the datasets)
	Old     string    `json:"old"`           // where the old lineage came from
	New     []string  `json:"new"`           // the analyzed files
	Depth   int       `json:"depth"`
	Changes []Reached `json:"changes"`
	// TagArrivals are the tags the change would carry unmasked where their settings do not
	// allow them (WithTags); nil when the policy step did not run.
	TagArrivals []TagArrival `json:"tagArrivals,omitempty"`
	Summary     Summary      `json:"summary"`
	FailOn      string       `json:"failOn"`
	Exit        int          `json:"exit"`
}

// Summary counts the changes and what they reach.
type Summary struct {
	Changes            int      `json:"changes"`
	Breaking           int      `json:"breaking"`           // breaking changes that reach something downstream
	Altering           int      `json:"altering"`           // other changes that reach something downstream
	DownstreamColumns  int      `json:"downstreamColumns"`  // distinct columns reached
	DownstreamDatasets []string `json:"downstreamDatasets"` // distinct datasets reached
	DownstreamJobs     []string `json:"downstreamJobs"`
	TagArrivals        int      `json:"tagArrivals"` // tags carried unmasked where their settings do not allow them
}

// NewReport joins the changes with what lies downstream of their affected columns (reach, keyed
// by the column a walk started from) and decides the exit code by failOn.
func NewReport(changes []Change, reach map[string][]Downstream, failOn string) Report {
	r := Report{FailOn: failOn, Changes: []Reached{}}
	cols, dss, jobs := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, c := range changes {
		x := Reached{Change: c, Before: roles(c.Before), After: roles(c.After), Downstream: []Downstream{}}
		seen := map[string]bool{}
		xd, xj := map[string]bool{}, map[string]bool{}
		for _, a := range c.Affected {
			for _, d := range reach[a] {
				if seen[d.Column] {
					continue
				}
				seen[d.Column] = true
				x.Downstream = append(x.Downstream, d)
				xd[d.Dataset], dss[d.Dataset], cols[d.Column] = true, true, true
				if len(d.Jobs) > 0 {
					xj[d.Jobs[0]], jobs[d.Jobs[0]] = true, true
				}
			}
		}
		sort.SliceStable(x.Downstream, func(i, j int) bool {
			if x.Downstream[i].Hops != x.Downstream[j].Hops {
				return x.Downstream[i].Hops < x.Downstream[j].Hops
			}
			return x.Downstream[i].Column < x.Downstream[j].Column
		})
		x.Datasets, x.Jobs = keys(xd), keys(xj)
		if len(x.Downstream) > 0 {
			if c.Breaking {
				r.Summary.Breaking++
			} else {
				r.Summary.Altering++
			}
		}
		r.Changes = append(r.Changes, x)
	}
	r.Summary.Changes = len(changes)
	r.Summary.DownstreamColumns = len(cols)
	r.Summary.DownstreamDatasets, r.Summary.DownstreamJobs = keys(dss), keys(jobs)
	switch {
	case failOn != FailOnNever && r.Summary.Breaking > 0:
		r.Exit = ExitBreaking
	case failOn == FailOnAlter && r.Summary.Altering > 0:
		r.Exit = ExitAlters
	}
	return r
}

func roles(ts []plan.Transformation) []Role {
	out := make([]Role, len(ts))
	for i, t := range ts {
		out[i] = Role{Role: t.Type + "/" + t.Subtype, Masking: t.Masking, Expr: t.Expr}
	}
	return out
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
