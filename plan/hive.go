package plan

import (
	"strings"

	"github.com/colline/colline/events"
)

// Hive events (event format 1.4) carry Hive's own column lineage, computed by Hive
// (LineageLogger's edges and vertices), not a plan: extractHive maps it onto the same Lineage as a
// Spark plan's, with the same dataset keys for the same metastore table (Identify).
//
//   - A PROJECTION edge feeds each target column from each source column: DIRECT, IDENTITY when
//     the expression is the column itself (or Hive wrote none), AGGREGATION when the column is
//     inside an aggregate call, else TRANSFORMATION; masked when every reference is inside a hash,
//     count or mask function. A column that is only a CASE WHEN / IF condition is INDIRECT
//     CONDITIONAL instead (as Spark's plans say), and one that is both says both.
//   - A PREDICATE edge (WHERE, JOIN ON, Hive's derived not-null filters) is a row-level dependency
//     of every dataset its targets belong to: JOIN when its sources span two or more tables (Hive's
//     vertices tell it), else FILTER.
//   - compute_stats(...) edges are Hive's automatic column statistics, not lineage: dropped.
//   - A windowing expression is Hive's parse tree, and its sources are every column of the
//     window's input: a column in the window specification is INDIRECT WINDOW, one in the
//     function's arguments a value, and one the tree never names is left out.
//   - TABLE vertices (count(*)) name a dataset read, not a column: the dataset is a read, and no
//     column edge comes from it.
//
// Written datasets come from the event's outputs (the hook), else from the target vertices
// "db.table.column" (a LineageLogger record); target vertices of a directory write are the
// directory's columns; those of a plain query's result are not lineage.
//
// With tableOnly (a record over a budget), it maps the written and read datasets and their columns
// but no edge: table-level lineage, with no budget.
func extractHive(env *events.Envelope, b Budget, tableOnly bool) (*Lineage, Budget) {
	h := env.Hive
	b = b.withDefaults()
	if n := len(h.Vertices); n > b.Nodes && !tableOnly {
		tooComplex(BudgetNodes, n, b.Nodes, true)
	}
	x := &hiveExtractor{h: h, collector: newCollector(b.Edges)}
	x.outputs()
	for _, d := range h.Inputs {
		for _, ds := range Identify(&d) {
			x.read(ds)
		}
	}
	x.resolveVertices()
	if !tableOnly {
		for i := range h.Edges {
			x.edge(&h.Edges[i])
		}
	}
	lin := &Lineage{Unknown: map[string]int{}}
	x.finish(lin)
	return lin, Budget{Nodes: len(h.Vertices), Edges: x.charged, Depth: 1}
}

type hiveExtractor struct {
	h       *events.Hive
	byTable map[string]*Write // "db.table" (lower case) → write
	dir     *Write            // the one directory written, if exactly one
	vertex  []hiveVertex      // by vertex id
	collector
}

// hiveVertex is a vertex resolved: a column of a dataset (col set), a dataset (table), or nothing.
type hiveVertex struct {
	ds    *Dataset
	col   string // column key; "" for a TABLE vertex
	table string // the vertex's "db.table", lower case ("" for result columns)
	write *Write // the written dataset a target column belongs to
}

// outputs records the written datasets: the hook's outputs, else the tables of the target vertices.
func (x *hiveExtractor) outputs() {
	x.byTable = map[string]*Write{}
	dirs := 0
	for _, o := range x.h.Outputs {
		for _, ds := range Identify(&o.Dataset) {
			w := x.write(ds, o.Mode)
			switch o.Dataset.Kind {
			case "path":
				dirs++
				x.dir = w
			default:
				x.byTable[strings.ToLower(strings.Join(append(append([]string{}, o.Dataset.Namespace...), o.Dataset.Name), "."))] = w
			}
			for k, c := range o.Columns {
				typ := ""
				if k < len(o.ColumnTypes) {
					typ = o.ColumnTypes[k]
				}
				x.addColumn(&w.Dataset, c, typ)
			}
		}
	}
	if dirs != 1 {
		x.dir = nil
	}
	if len(x.h.Outputs) > 0 {
		return
	}
	// a LineageLogger record: the tables of the PROJECTION targets are written
	for _, e := range x.h.Edges {
		if e.EdgeType != events.HiveProjection {
			continue
		}
		for _, t := range e.Targets {
			if v := x.h.Vertices[t]; v.VertexType == events.HiveColumn {
				if db, table, _, ok := splitVertex(v.VertexID); ok {
					key := strings.ToLower(db + "." + table)
					if x.byTable[key] == nil {
						for _, ds := range Identify(hiveTable(db, table)) {
							x.byTable[key] = x.write(ds, "")
						}
					}
				}
			}
		}
	}
}

// resolveVertices maps every vertex to a column or dataset. A vertex is a target when some edge
// has it as a target: targets are columns of written datasets, sources columns of read ones.
func (x *hiveExtractor) resolveVertices() {
	target := make([]bool, len(x.h.Vertices))
	for _, e := range x.h.Edges {
		for _, t := range e.Targets {
			target[t] = true
		}
	}
	x.vertex = make([]hiveVertex, len(x.h.Vertices))
	for i, v := range x.h.Vertices {
		db, table, col, ok := splitVertex(v.VertexID)
		if v.VertexType == events.HiveTable {
			db, table, col, ok = "", "", "", false
			if a, b, found := strings.Cut(v.VertexID, "."); found && !strings.Contains(b, ".") {
				db, table, ok = a, b, true
			}
		}
		if target[i] {
			switch {
			case ok && col != "" && x.byTable[strings.ToLower(db+"."+table)] != nil:
				w := x.byTable[strings.ToLower(db+"."+table)]
				x.vertex[i] = hiveVertex{ds: &w.Dataset, write: w, table: strings.ToLower(db + "." + table), col: x.addColumn(&w.Dataset, col, "")}
			case x.dir != nil && v.VertexType == events.HiveColumn:
				name := v.VertexID
				if k := strings.LastIndexByte(name, '.'); k >= 0 {
					name = name[k+1:]
				}
				x.vertex[i] = hiveVertex{ds: &x.dir.Dataset, write: x.dir, col: x.addColumn(&x.dir.Dataset, name, "")}
			}
			continue // else a plain query's result column: not lineage
		}
		if !ok {
			continue
		}
		for _, ds := range Identify(hiveTable(db, table)) {
			d := x.read(ds)
			hv := hiveVertex{ds: d, table: strings.ToLower(db + "." + table)}
			if col != "" {
				hv.col = x.addColumn(d, col, "")
			}
			x.vertex[i] = hv
		}
	}
}

// edge adds the lineage of one Hive edge.
func (x *hiveExtractor) edge(e *events.HiveEdge) {
	expr := strings.TrimSpace(e.Expression)
	switch e.EdgeType {
	case events.HiveProjection:
		if strings.HasPrefix(strings.ToLower(expr), "compute_stats(") {
			return // automatic column statistics
		}
		for _, s := range e.Sources {
			src := x.vertex[s]
			if src.col == "" {
				continue // a TABLE vertex: no column feeds the value
			}
			d := projection(expr, x.h.Vertices[s].VertexID)
			if len(d) == 0 {
				continue
			}
			for _, t := range e.Targets {
				if dst := x.vertex[t]; dst.col != "" {
					x.addEdge(x.edges, src.col, dst.col, d)
				}
			}
		}
	case events.HivePredicate:
		tables := map[string]bool{}
		for _, s := range e.Sources {
			if t := x.vertex[s].table; t != "" {
				tables[t] = true
			}
		}
		sub := FilterSub
		if len(tables) > 1 {
			sub = JoinSub
		}
		written := map[*Write]bool{}
		for _, t := range e.Targets {
			if w := x.vertex[t].write; w != nil {
				written[w] = true
			}
		}
		for _, s := range e.Sources {
			src := x.vertex[s]
			if src.col == "" {
				continue
			}
			for _, k := range x.order {
				if w := x.writes[k]; written[w] {
					x.addEdge(x.rows, src.col, w.Key, dep{{indirect: sub, expr: expr}})
				}
			}
		}
	}
}

// projection is how a PROJECTION edge's expression feeds the target from the source column
// labelled label. Nil: not at all (a window tree's source that the tree never names).
func projection(expr, label string) dep {
	if expr == "" {
		return dep{{kind: kindIdentity}}
	}
	col := strings.ToLower(label)
	if k := strings.LastIndexByte(col, '.'); k >= 0 {
		col = col[k+1:]
	}
	if isWindowTree(expr) {
		w := analyzeWindow(expr, col)
		var d dep
		if w.value {
			t := tr{kind: kindTransformation, masking: w.masked, expr: expr}
			if w.aggregated {
				t.kind = kindAggregation
			}
			d = d.merge(t)
		}
		if w.window {
			d = d.merge(tr{indirect: WindowSub, expr: expr})
		}
		return d
	}
	u := analyzeHive(expr, col)
	switch {
	case u.single:
		// one reference, through conversions only, whatever it names: a subquery's alias
		// (UDFToInteger(x)), a union's column, named after its first branch, fed by every branch
		u = hiveUse{value: true, identity: true}
	case !u.found:
		// the text names the column otherwise (an alias of a subquery): the whole expression decides
		u = hiveUse{value: true, aggregated: hiveCalls(expr, hiveAggregates), masked: hiveMaskedAll(expr)}
	}
	var d dep
	if u.value {
		t := tr{kind: kindTransformation, masking: u.masked, expr: expr}
		switch {
		case u.aggregated:
			t.kind = kindAggregation
		case u.identity:
			t.kind, t.expr = kindIdentity, ""
		}
		d = d.merge(t)
	}
	if u.conditional {
		d = d.merge(tr{indirect: Conditional, expr: expr})
	}
	return d
}

// splitVertex splits Hive's "db.table.column" (database and table names hold no dots; a column
// name may); ok is false for anything shorter.
func splitVertex(label string) (db, table, col string, ok bool) {
	parts := strings.SplitN(label, ".", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// hiveTable is the identity of a metastore table that Hive's lineage names "db.table": in the
// metastore's default catalog, which Spark's session catalog reads (docs/hive.md).
func hiveTable(db, table string) *events.Dataset {
	return &events.Dataset{Kind: "table", Namespace: []string{db}, Name: table}
}
