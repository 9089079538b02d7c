package plan

// dep says how one source column reaches an attribute: directly (with a strength) or indirectly
// (with a subtype). deps maps a source column key to the strongest way it gets there.
type dep struct {
	kind     int    // for direct deps: identity < transformation < aggregation
	indirect string // "" for a direct dep, else the INDIRECT subtype
	masking  bool
	expr     string
}

type deps map[string]dep

const (
	kindIdentity = iota
	kindTransformation
	kindAggregation
)

var kindNames = [...]string{Identity, Transformation, Aggregation}

// indirectRank orders indirect subtypes when one source column reaches a target in several
// indirect ways: the edge keeps the one that says most about the target's values.
var indirectRank = map[string]int{Conditional: 6, WindowSub: 5, JoinSub: 4, FilterSub: 3, GroupBy: 2, SortSub: 1}

// stronger reports whether a should replace b: direct beats indirect, then by kind or rank.
func stronger(a, b dep) bool {
	switch {
	case a.indirect == "" && b.indirect != "":
		return true
	case a.indirect != "" && b.indirect == "":
		return false
	case a.indirect == "":
		return a.kind > b.kind
	default:
		return indirectRank[a.indirect] > indirectRank[b.indirect]
	}
}

// add merges one dep for column col. A column counts as masked only if every direct way to it is.
func (d deps) add(col string, x dep) {
	old, ok := d[col]
	if !ok {
		d[col] = x
		return
	}
	bothDirect := x.indirect == "" && old.indirect == ""
	masked := x.masking && old.masking
	switch {
	case stronger(x, old):
		old = x
	case !stronger(old, x) && x.expr != "" && (old.expr == "" || x.expr < old.expr):
		old.expr = x.expr // equally strong: keep the same text whatever the order of discovery
	}
	if bothDirect {
		old.masking = masked
	}
	d[col] = old
}

func (d deps) addAll(o deps) {
	for col, x := range o {
		d.add(col, x)
	}
}

// through returns the deps of src as seen through one more expression step.
func through(src deps, step ectx) deps {
	out := make(deps, len(src))
	for col, x := range src {
		out.add(col, step.apply(x))
	}
	return out
}

// ectx is what the expression path from a named expression down to an attribute did to it.
type ectx struct {
	kind     int
	indirect string
	masking  bool
	expr     string
}

// The outer step decides an indirect subtype: a column that reaches a filter condition through a
// window's partition key filters the rows (FILTER), it does not partition them (WINDOW).
func (c ectx) apply(x dep) dep {
	if c.indirect != "" {
		return dep{indirect: c.indirect, expr: c.expr}
	}
	if x.indirect != "" {
		return x
	}
	if c.kind > x.kind {
		x.kind = c.kind
	}
	if c.kind > kindIdentity && c.expr != "" {
		x.expr = c.expr
	}
	x.masking = x.masking || c.masking
	return x
}
