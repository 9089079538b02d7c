package plan

import (
	"slices"
	"sort"
	"strings"
)

// tr is one way a source column reaches an attribute: directly (with a strength) or indirectly
// (with a subtype). Every way is kept: a column can be a value and a CASE condition at once.
type tr struct {
	kind     int    // for direct ways: identity < transformation < aggregation
	indirect string // "" for a direct way, else the INDIRECT subtype
	masking  bool
	expr     string
	// field is the struct field of the attribute's value that the source feeds, as a dotted path
	// ("" for the whole value): set by the struct an expression builds (named_struct, struct),
	// followed by an extraction of that field (nested.go)
	field string
	// rows scopes a row-level role to the rows of some UNION branches: the sorted keys of the
	// datasets those rows come from, joined by newlines ("" for every row; resolve.go, decides)
	rows string
}

// dep is every way one source column reaches an attribute, sorted by role (see less), one entry
// per role.
type dep []tr

// deps maps a source column key to the ways it reaches an attribute.
type deps map[string]dep

const (
	kindIdentity = iota
	kindTransformation
	kindAggregation
)

var kindNames = [...]string{Identity, TransformationSub, Aggregation}

// sameRole reports whether a and b are the same role (type and subtype).
func sameRole(a, b tr) bool {
	return a.indirect == b.indirect && a.kind == b.kind && a.field == b.field
}

// less orders roles: direct ones first, by strength, then indirect ones by subtype name.
func less(a, b tr) bool {
	if (a.indirect == "") != (b.indirect == "") {
		return a.indirect == ""
	}
	if a.indirect != b.indirect {
		return a.indirect < b.indirect
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.field < b.field
}

// merge adds one way to a dep. The same role met twice is masked only if both are (a value
// is hidden only if every direct way to it hides it), and keeps the smaller expression text so
// that the result does not depend on the order of discovery.
func (d dep) merge(x tr) dep {
	for k := range d {
		if !sameRole(d[k], x) {
			continue
		}
		old := &d[k]
		old.masking = old.masking && x.masking
		if x.expr != "" && (old.expr == "" || x.expr < old.expr) {
			old.expr = x.expr
		}
		old.rows = unionRows(old.rows, x.rows)
		return d
	}
	k := sort.Search(len(d), func(j int) bool { return less(x, d[j]) })
	d = append(d, tr{})
	copy(d[k+1:], d[k:])
	d[k] = x
	return d
}

// unionRows is the scope of a role met with scopes a and b: every row if either is, else the
// rows of both.
func unionRows(a, b string) string {
	switch {
	case a == "" || b == "":
		return ""
	case a == b:
		return a
	}
	keys := append(strings.Split(a, "\n"), strings.Split(b, "\n")...)
	slices.Sort(keys)
	return strings.Join(slices.Compact(keys), "\n")
}

// add merges every way of x into column col.
func (d deps) add(col string, x dep) {
	old := d[col]
	if old == nil {
		d[col] = append(dep(nil), x...)
		return
	}
	for _, t := range x {
		old = old.merge(t)
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
		var nd dep
		for _, t := range x {
			nd = nd.merge(step.apply(t))
		}
		out[col] = nd
	}
	return out
}

// ectx is what the expression path from a named expression down to an attribute did to it.
type ectx struct {
	kind     int
	indirect string
	masking  bool
	expr     string
	// field is the struct field that an enclosing extraction (GetStructField, …) reads of the value
	// below it; build is the field of the enclosing built struct that the value below lands in
	// (dotted paths, "" for the whole value); sealed: an expression on the way makes a new value
	// of what is below it, whose own fields are no fields of the result (nested.go)
	field, build string
	sealed       bool
}

// The outer step decides an indirect subtype: a column that reaches a filter condition through a
// window's partition key filters the rows (FILTER), it does not partition them (WINDOW).
func (c ectx) apply(x tr) tr {
	if c.indirect != "" {
		return tr{indirect: c.indirect, expr: c.expr}
	}
	if x.indirect != "" {
		return x
	}
	x.field = joinPath(c.build, x.field)
	if c.kind > x.kind {
		x.kind = c.kind
	}
	if c.kind > kindIdentity && c.expr != "" {
		x.expr = c.expr
	}
	x.masking = x.masking || c.masking
	return x
}

// transformations renders a dep in the facet's shape, in role order.
func (d dep) transformations() []Transformation {
	out := make([]Transformation, len(d))
	for k, t := range d {
		x := Transformation{Masking: t.masking, Expr: Truncate(t.expr), Rows: t.rows}
		if t.indirect == "" {
			x.Type, x.Subtype = Direct, kindNames[t.kind]
		} else {
			x.Type, x.Subtype = Indirect, t.indirect
		}
		out[k] = x
	}
	return out
}

// joinPath joins two dotted paths, either of which may be empty.
func joinPath(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}
