package plan

import (
	"strings"

	"github.com/colline/colline/events"
)

// transparent expression classes keep a column's value as it is (type coercion, nullability
// hints): a column read through them alone is still an IDENTITY.
var transparent = map[string]bool{
	"Alias": true, "Cast": true, "AnsiCast": true, "UpCast": true, "KnownNotNull": true,
	"KnownNullable": true, "KnownFloatingPointNormalized": true, "PromotePrecision": true,
	"CheckOverflow": true, "CheckOverflowInTableInsert": true, "OuterReference": true, "SortOrder": true,
}

// masks are expression classes that hide the value they read: hashes, counts, masks.
var masks = map[string]bool{
	"Md5": true, "Sha1": true, "Sha2": true, "Crc32": true, "Murmur3Hash": true, "XxHash64": true,
	"HiveHash": true, "Mask": true, "Count": true, "HyperLogLogPlusPlus": true, "CountIf": true,
	"AesEncrypt": true,
}

// aggregates wrap an aggregate function in an analyzed plan.
var aggregates = map[string]bool{"AggregateExpression": true, "PythonUDAF": true, "ScalaUDAF": true}

// subqueries are expressions whose value comes from a nested plan.
var subqueries = map[string]bool{
	"ScalarSubquery": true, "ListQuery": true, "Exists": true, "LateralSubquery": true,
	"InSubquery": true,
}

// structural expression classes keep their value's structure: a field read of their result is a
// field read of their input, and the fields built below them are the fields of their result.
var structural = map[string]bool{
	"JsonToStructs": true, "StructsToJson": true, "If": true, "CaseWhen": true, "Coalesce": true,
}

// keepsStructure reports whether class keeps a value's structure (see structural).
func keepsStructure(class string) bool { return transparent[class] || structural[class] }

// expr returns the source columns expression x of node i reads, seen through context c.
func (r *resolver) expr(i int, x *events.Expr, c ectx) deps {
	out := newAcc()
	r.walk(i, x, c, out)
	return out.d
}

func (r *resolver) exprDeps(i int, list []events.Expr, c ectx) deps {
	out := newAcc()
	for k := range list {
		r.walk(i, &list[k], c, out)
	}
	return out.d
}

// acc accumulates what an expression reads. Adding the same attribute in the same context twice
// changes nothing (merging a role is idempotent), so each (attribute, context) is added once: an
// attribute with many sources referenced many times costs its sources once, not once per reference.
type acc struct {
	d    deps
	seen map[accKey]bool
	// withs are the With expressions around the expression walked now, innermost last: the
	// definitions a CommonExpressionRef may name (common)
	withs []*events.Expr
}

type accKey struct {
	node int
	id   int64
	c    ectx
}

func newAcc() *acc { return &acc{d: deps{}, seen: map[accKey]bool{}} }

func (r *resolver) walk(i int, x *events.Expr, c ectx, out *acc) {
	switch {
	case x.Class == "AttributeReference" || (x.Class == "OuterReference" && len(x.Children) == 0):
		// an outer reference inside a subquery's plan names the outer attribute by exprId
		if x.ExprID != nil {
			k := accKey{i, *x.ExprID, c}
			if out.seen[k] {
				return
			}
			out.seen[k] = true
			d := r.lookup(i, *x.ExprID)
			if c.field != "" {
				d = r.narrow(d, c.field) // a field of the attribute's value (nested.go)
			}
			r.addAll(out.d, r.through(d, c))
		}
		return
	case x.Class == "Literal":
		return
	case x.Class == "With" || x.Class == "CommonExpressionRef" || x.Class == "CommonExpressionDef":
		r.common(i, x, c, out)
		return
	case x.Class == "If" && len(x.Children) == 3 && sameAttribute(&x.Children[1], &x.Children[2]):
		// IF(c, a, a) is a: Spark's copy-on-write UPDATE rewrites every column of the table as
		// IF(<where>, <new value>, <old value>), also those the SET leaves as they are
		r.walk(i, &x.Children[1], c, out)
		return
	case x.Class == "BoundReference":
		// a reference to the node's input row by ordinal (the serializer of a typed Dataset
		// operation reads its child's object column this way); the ordinal is not in the event,
		// so it stands for every child column: exact for serializers, whose child has one
		for _, ch := range r.nodes[i].Children {
			for _, d := range sortedScope(r.outputs(ch)) {
				r.addAll(out.d, r.through(d, ectx{kind: max(c.kind, kindTransformation), indirect: c.indirect, masking: c.masking, expr: c.expr}))
			}
		}
		return
	case r.nested(i, x, c, out):
		return // a struct field read or built (nested.go)
	case aggregates[x.Class]:
		c.kind = kindAggregation
	case !transparent[x.Class] && c.kind < kindTransformation:
		c.kind = kindTransformation
	}
	if !keepsStructure(x.Class) {
		// a new value: no field of it is one of the input's, and what is below lands in the
		// enclosing built field (if any) as a whole
		c.field, c.sealed = "", true
	}
	if masks[x.Class] {
		c.masking = true
	}
	if x.Plan != nil {
		r.subquery(i, x, c, out)
		return
	}
	for k := range x.Children {
		cc := c
		if role := conditionRole(x, k); role != "" && cc.indirect == "" {
			cc.indirect = role
		}
		if cc.indirect != "" && cc.indirect != c.indirect {
			cc.field, cc.build = "", "" // a condition decides the whole value, not a field of it
		}
		r.walk(i, &x.Children[k], cc, out)
		if c.indirect == "" && x.Class == "Coalesce" && k < len(x.Children)-1 {
			// COALESCE(a, b) (and NVL, IFNULL, which Spark rewrites to it): a is the value when
			// it is not null, and whether it is null decides whether b is taken, so a is also
			// CONDITIONAL, like the condition of CASE WHEN a IS NOT NULL THEN a ELSE b END
			cc.indirect = Conditional
			r.walk(i, &x.Children[k], cc, out)
		}
	}
}

// nested handles the expressions that read or build struct fields; false: not one, or without
// the names to resolve it (the caller then walks x as any other expression).
func (r *resolver) nested(i int, x *events.Expr, c ectx, out *acc) bool {
	switch x.Class {
	case "GetStructField", "GetArrayStructFields":
		if x.Name == "" || len(x.Children) != 1 {
			return false
		}
		cc := c
		cc.field = joinPath(quoteField(x.Name), c.field)
		r.walk(i, &x.Children[0], cc, out)
		return true
	case "CreateNamedStruct":
		if len(x.Fields) == 0 || len(x.Fields)*2 != len(x.Children) {
			return false
		}
		if c.field != "" {
			head, rest := splitPath(c.field)
			for k, f := range x.Fields {
				if strings.EqualFold(quoteField(f), head) {
					cc := c
					cc.field = rest
					r.walk(i, &x.Children[2*k+1], cc, out)
					return true
				}
			}
			return false
		}
		if c.indirect != "" || c.sealed {
			return false // a condition reads the whole struct; below a new value, fields are its parts
		}
		for k, f := range x.Fields {
			cc := c
			cc.build = joinPath(c.build, quoteField(f))
			r.walk(i, &x.Children[2*k+1], cc, out)
		}
		return true
	case "If":
		// IF(x IS NULL, NULL, named_struct(…x's fields…)): how the analyzer casts a struct to a
		// table's struct type (by field); null stays null, every field keeps its value
		if len(x.Children) != 3 || x.Children[0].Class != "IsNull" || x.Children[1].Class != "Literal" ||
			x.Children[2].Class != "CreateNamedStruct" || len(x.Children[2].Fields) == 0 {
			return false
		}
		r.walk(i, &x.Children[2], c, out)
		return true
	case "GetArrayItem":
		// items[0].sku: a field of one element is the array's field, picked: TRANSFORMATION
		if c.field == "" || len(x.Children) != 2 {
			return false
		}
		cc := c
		cc.kind = max(cc.kind, kindTransformation)
		r.walk(i, &x.Children[0], cc, out)
		cc.field, cc.sealed = "", true // the index picks the element: part of the field's value
		r.walk(i, &x.Children[1], cc, out)
		return true
	}
	return false
}

// common resolves Spark 4's common expressions: With(body, defs…) evaluates each definition once
// and its body names them by CommonExpressionRef (NULLIF(a, b) is With(a) { ref => IF(ref = b,
// NULL, ref) }; BETWEEN is With(x) { ref => ref >= lo AND ref <= hi }). A reference is what its
// definition reads, in the reference's own context: in IF(ref = b, NULL, ref) the first ref is a
// condition and the second the value, as a is in 3.5's IF(a = b, NULL, a). With and the
// definition add no step of their own (the function around them, NULLIF, BETWEEN, does). A
// reference finds its definition by id (event format 1.5) in the nearest With that has it;
// without ids (older events) it stands for the definitions of the nearest With that has any.
// A definition is evaluated outside its With, so a reference cannot reach its own definition.
func (r *resolver) common(i int, x *events.Expr, c ectx, out *acc) {
	switch x.Class {
	case "With":
		if len(x.Children) == 0 {
			return
		}
		out.withs = append(out.withs, x)
		r.walk(i, &x.Children[0], c, out)
		out.withs = out.withs[:len(out.withs)-1]
	case "CommonExpressionDef":
		for k := range x.Children {
			r.walk(i, &x.Children[k], c, out)
		}
	case "CommonExpressionRef":
		for k := len(out.withs) - 1; k >= 0; k-- {
			var defs []*events.Expr
			w := out.withs[k]
			for j := 1; j < len(w.Children); j++ {
				d := &w.Children[j]
				if d.Class == "CommonExpressionDef" && (x.CommonID == nil || d.CommonID != nil && *d.CommonID == *x.CommonID) {
					defs = append(defs, d)
				}
			}
			if len(defs) == 0 {
				continue
			}
			saved := out.withs
			out.withs = append([]*events.Expr(nil), saved[:k]...)
			for _, d := range defs {
				r.common(i, d, c, out)
			}
			out.withs = saved
			return
		}
	}
}

// subquery adds what a subquery expression reads. Its value (the plan's outputs) feeds the
// expression. What decides the subquery's rows (its filters, joins, grouping) decides the value
// too, but only of this expression: a scalar subquery in a SELECT list filters no outer row.
// Row-level uses (WHERE EXISTS ...) are indirect anyway (c.indirect), and decides() adds them
// once per write. The expression's children are the outer columns the plan refers to: such a
// column is a correlation key (JOIN) where the plan's rows depend on it, and only a value where
// they do not (SELECT (SELECT a + b) FROM t: a and b are the value, there is nothing to join).
func (r *resolver) subquery(i int, x *events.Expr, c ectx, out *acc) {
	p := *x.Plan
	value := ectx{kind: max(c.kind, kindTransformation), indirect: c.indirect, masking: c.masking, expr: c.expr}
	for _, d := range sortedScope(r.outputs(p)) {
		r.addAll(out.d, r.through(d, value))
	}
	key := c
	if key.indirect == "" {
		key.indirect = JoinSub
	}
	outer := newAcc()
	outer.withs = out.withs
	for k := range x.Children {
		r.walk(i, &x.Children[k], key, outer)
	}
	for col, d := range r.decides(p) {
		if o, ok := outer.d[col]; ok {
			out.d.add(col, o) // the correlation: the outer column decides the subquery's rows
			continue
		}
		if c.indirect != "" {
			d = dep{{indirect: c.indirect, expr: c.expr}}
		} else {
			d = unscoped(d) // which of the subquery's rows: not rows of the write
		}
		out.d.add(col, d)
	}
}

// unscoped returns x without row scopes (tr.rows).
func unscoped(x dep) dep {
	for _, t := range x {
		if t.rows != "" {
			var out dep
			for _, t := range x {
				t.rows = ""
				out = out.merge(t)
			}
			return out
		}
	}
	return x
}

// sameAttribute reports whether a and b are the same attribute, seen through transparent wrappers.
func sameAttribute(a, b *events.Expr) bool {
	a, b = unwrap(a), unwrap(b)
	return a.Class == "AttributeReference" && b.Class == "AttributeReference" &&
		a.ExprID != nil && b.ExprID != nil && *a.ExprID == *b.ExprID
}

func unwrap(x *events.Expr) *events.Expr {
	for transparent[x.Class] && x.Class != "OuterReference" && len(x.Children) == 1 {
		x = &x.Children[0]
	}
	return x
}

// conditionRole tells whether child k of x decides which value is taken or how it is computed,
// rather than being the value: CASE/IF conditions, an aggregate's FILTER (WHERE ...) clause (the
// same as a CASE inside the aggregate), the pivot column of a PIVOT (it picks the output column a
// value lands in), window partitioning and ordering, the ordering a rank is computed over (rank()
// has its ORDER BY keys as children: the rank is their position, not a function of their values,
// as OpenLineage also has it), and the outer references of a subquery expression without a plan
// (with one, subquery decides which are correlation keys).
func conditionRole(x *events.Expr, k int) string {
	switch x.Class {
	case "CaseWhen":
		if k%2 == 0 && k+1 < len(x.Children) {
			return Conditional
		}
	case "If":
		if k == 0 {
			return Conditional
		}
	case "AggregateExpression":
		if k > 0 {
			return Conditional
		}
	case "PivotFirst":
		if k == 0 {
			return Conditional
		}
	case "WindowSpecDefinition", "Rank", "DenseRank", "PercentRank", "CumeDist":
		return WindowSub
	case "ScalarSubquery", "Exists", "ListQuery", "LateralSubquery":
		return JoinSub // children are the outer references the subquery is correlated on
	}
	return ""
}

// roleSQL is the expression text of a role: its expressions' text, comma-separated.
func roleSQL(list []events.Expr) string {
	var parts []string
	for k := range list {
		if list[k].SQL != "" {
			parts = append(parts, list[k].SQL)
		}
	}
	return strings.Join(parts, ", ")
}

func topSQL(list []events.Expr) string {
	if len(list) > 0 {
		return list[0].SQL
	}
	return ""
}
