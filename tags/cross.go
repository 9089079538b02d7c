package tags

import (
	"context"
	"slices"

	"github.com/colline/colline/plan"
)

// Direction is the way a walk follows hops.
type Direction string

const (
	Up   Direction = "up"   // into columns: where their values come from
	Down Direction = "down" // out of columns: where their values go
)

// Graph is what tags read of the lineage graph (graph.Reader's tag reads satisfy it; Memory is
// one in memory).
type Graph interface {
	// Step returns the hops out of (Down) or into (Up) the columns keys: FEEDS, DECIDES_ROWS (Down
	// only), and the struct links FIELD and PARENT.
	Step(ctx context.Context, dir Direction, keys []string) ([]Hop, error)
	// Columns returns the dataset of each of the columns keys that exists.
	Columns(ctx context.Context, keys []string) (map[string]string, error)
	// Rules returns the rules that name one of the columns keys, and every rule with a pattern.
	Rules(ctx context.Context, keys []string) ([]Rule, error)
	// Tagged returns the columns that rules tag with key, each with those tags.
	Tagged(ctx context.Context, key string) ([]Tagged, error)
	// Policies returns the settings of the tags that a file describes, by key.
	Policies(ctx context.Context) (map[string]Policy, error)
}

// Coner is a Graph that also gives a whole cone at once (Cone). A walk asks for it first and
// steps only from the columns it does not cover: fewer round trips, the same answer.
type Coner interface {
	Cone(ctx context.Context, dir Direction, keys []string, limit int) (*Cone, error)
}

// Upstreamer is a Graph that also tells which columns are upstream of columns, without their
// hops: Of answers a column whose upstream holds no tagged column and no struct without walking
// it (most columns: tags are set on few), and walks the others.
type Upstreamer interface {
	Upstream(ctx context.Context, keys []string, limit int) ([]Upstream, error)
}

// Upstream is what is upstream of a column through FEEDS, however they cross, up to 100 hops
// (a walk's default most), the column itself included, counted up to a limit.
type Upstream struct {
	Column  string
	Dataset string
	Columns int  // how many, at most the limit and the column
	Structs bool // one of them has struct fields or is one
	Tagged  bool // a rule tags one of them
}

// Cone is the part of the graph that columns reach (Down) or come from (Up) through FEEDS, at
// most a limit of columns: its Columns (the start columns that exist among
// them), each with its dataset, every hop of every one of them (all kinds), and the rules that
// name one of them (Rules with these keys: the exact ones; pattern rules are Graph.Rules').
type Cone struct {
	Hops    []Hop
	Columns map[string]string
	Rules   []Rule
}

// Tagged is a column that its sources tag: where a tag starts.
type Tagged struct {
	Column  string `json:"column"`
	Dataset string `json:"dataset"`
	Tags    []Tag  `json:"tags"`
}

// Limits bound a walk.
type Limits struct {
	MaxColumns int // columns an answer may hold (per asked column for Of); default DefaultMaxColumns
	MaxSteps   int // hops of a path; default DefaultMaxSteps
}

// Defaults of Limits.
const (
	DefaultMaxColumns = 20000
	DefaultMaxSteps   = 100
)

func (l Limits) columns() int {
	if l.MaxColumns <= 0 {
		return DefaultMaxColumns
	}
	return l.MaxColumns
}

func (l Limits) steps() int {
	if l.MaxSteps <= 0 {
		return DefaultMaxSteps
	}
	return l.MaxSteps
}

// crossing is how a tag crosses one hop, before its settings apply.
type crossing int

const (
	blocked    crossing = iota // no DIRECT role: the hop uses the value (rows, a condition) without holding it
	carries                    // an unmasked DIRECT role that is not an aggregation, or a struct link
	aggregates                 // the unmasked DIRECT roles are all AGGREGATION
	masks                      // every DIRECT role masks (a hash, a count, a mask)
)

// cross says how a tag crosses h. A role masks only if it masks on every path that gives it
// (plan's rule), so one unmasked DIRECT role is enough to carry the value.
func cross(h Hop) crossing {
	switch h.Kind {
	case Field, Parent:
		return carries
	case DecidesRows:
		return blocked
	}
	direct, agg := false, false
	for _, r := range h.Roles {
		if r.Type != plan.Direct {
			continue
		}
		direct = true
		switch {
		case r.Masked:
		case r.Subtype == plan.Aggregation:
			agg = true
		default:
			return carries
		}
	}
	switch {
	case agg:
		return aggregates
	case direct:
		return masks
	}
	return blocked
}

// status is what a tag with settings p becomes in the column after a hop that crosses as c, or
// false when the hop does not carry it at all.
func (p Policy) status(c crossing) (Status, bool) {
	switch c {
	case carries:
		return Unmasked, true
	case aggregates:
		if p.Aggregation == AggregationStop {
			return Aggregated, true
		}
		return Unmasked, true
	case masks:
		return Masked, true
	}
	return "", false
}

// stepper fetches hops for walks, each column's once, a whole frontier per query; the first
// time, the whole cone when the Graph is a Coner.
type stepper struct {
	g       Graph
	dir     Direction
	limit   int // of the cone
	hops    map[string][]Hop
	coned   bool
	columns map[string]string // the cone's columns, with their datasets
	rules   []Rule            // the cone's exact rules
}

func newStepper(g Graph, dir Direction, limit int) *stepper {
	return &stepper{g: g, dir: dir, limit: limit, hops: map[string][]Hop{}}
}

// cone fetches the cone of keys, once, when the Graph can: one query for what a walk from any
// number of columns reads (the server expands from each start column, which costs little; the
// rows it returns cost, and a column is returned once whatever the number of cones it is in).
func (s *stepper) cone(ctx context.Context, keys []string) error {
	c, ok := s.g.(Coner)
	if s.coned || !ok {
		s.coned = true
		return nil
	}
	s.coned = true
	cone, err := c.Cone(ctx, s.dir, keys, s.limit)
	if err != nil {
		return err
	}
	for k := range cone.Columns {
		s.hops[k] = nil
	}
	s.add(cone.Hops)
	s.columns, s.rules = cone.Columns, cone.Rules
	return nil
}

func (s *stepper) add(hops []Hop) {
	for _, h := range hops {
		k := h.From
		if s.dir == Up {
			k = h.To
		}
		s.hops[k] = append(s.hops[k], h)
	}
}

// step returns the hops of each of keys (out of them Down, into them Up).
func (s *stepper) step(ctx context.Context, keys []string) (map[string][]Hop, error) {
	if err := s.cone(ctx, keys); err != nil {
		return nil, err
	}
	var missing []string
	for _, k := range keys {
		if _, ok := s.hops[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		missing = slices.Compact(missing)
		hops, err := s.g.Step(ctx, s.dir, missing)
		if err != nil {
			return nil, err
		}
		for _, k := range missing {
			s.hops[k] = nil
		}
		s.add(hops)
	}
	out := make(map[string][]Hop, len(keys))
	for _, k := range keys {
		out[k] = s.hops[k]
	}
	return out, nil
}

// policyOf returns key's settings: the file's, or the defaults.
func policyOf(ps map[string]Policy, key string) Policy {
	if p, ok := ps[key]; ok {
		return p
	}
	return DefaultPolicy(key)
}

// tagsAt returns the tags rules give the column key of dataset.
func tagsAt(rules []Rule, dataset, key string) []Tag {
	var out []Tag
	for _, r := range rules {
		if k, exact := r.ColumnKey(); exact && k == key || !exact && r.Matches(dataset, key) {
			if !slices.Contains(out, r.Tag) {
				out = append(out, r.Tag)
			}
		}
	}
	return out
}
