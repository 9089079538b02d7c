package plan

import (
	"maps"
	"slices"
	"sort"
)

// collector is what an extraction collects, whatever it reads (a Spark plan: resolver; Hive's own
// lineage: hiveExtractor): the datasets read and written with their columns, the column edges and
// the row-level dependencies. Every pair and role is charged to the edges budget as it comes, so
// that a plan over budget stops before its lineage fills the memory. finish makes the Lineage.
type collector struct {
	reads   map[string]*Dataset
	writes  map[string]*Write
	order   []string                     // write keys, in the order met
	columns map[*Dataset]map[string]bool // column keys of each dataset, for addColumn
	edges   map[[2]string]dep            // column → column
	rows    map[[2]string]dep            // column → written dataset
	charged int                          // pairs and roles so far (Budget.Edges)
	limit   int                          // Budget.Edges
}

func newCollector(edges int) collector {
	return collector{
		reads: map[string]*Dataset{}, writes: map[string]*Write{}, columns: map[*Dataset]map[string]bool{},
		edges: map[[2]string]dep{}, rows: map[[2]string]dep{}, limit: edges,
	}
}

// read returns the dataset read with d's key, adding d when it is new.
func (c *collector) read(d Dataset) *Dataset {
	if ds, ok := c.reads[d.Key]; ok {
		return ds
	}
	ds := d
	c.reads[d.Key] = &ds
	return &ds
}

// write returns the write of d's key, adding one with mode when it is new.
func (c *collector) write(d Dataset, mode string) *Write {
	if w, ok := c.writes[d.Key]; ok {
		return w
	}
	w := &Write{Dataset: d, Mode: mode}
	c.writes[d.Key] = w
	c.order = append(c.order, d.Key)
	return w
}

// addColumn adds a column to d unless d has it, in constant time: the column keys of every
// dataset are indexed (a linear scan made wide writes quadratic). It returns the column's key.
func (c *collector) addColumn(d *Dataset, name, typ string) string {
	key := ColumnKey(d.Key, name)
	have := c.columns[d]
	if have == nil {
		have = make(map[string]bool, len(d.Columns))
		for _, col := range d.Columns {
			have[col.Key] = true
		}
		c.columns[d] = have
	}
	if !have[key] {
		have[key] = true
		d.Columns = append(d.Columns, Column{Key: key, Name: name, Type: typ})
	}
	return key
}

// addEdge merges d into the pair src -> dst of m (edges or rows), charging each new pair and role
// to the edges budget.
func (c *collector) addEdge(m map[[2]string]dep, src, dst string, d dep) {
	k := [2]string{src, dst}
	old, had := m[k]
	if old == nil {
		old = make(dep, 0, len(d))
	}
	before := len(old)
	for _, t := range d {
		old = old.merge(t)
	}
	m[k] = old
	c.charged += len(old) - before
	if !had {
		c.charged++
	}
	if c.charged > c.limit {
		tooComplex(BudgetEdges, c.charged, c.limit, false)
	}
}

// finish puts what was collected into lin: the writes in the order met, the reads by key (a view
// the event also writes is listed once, as the dataset its plan feeds), the edges and row-level
// dependencies sorted.
func (c *collector) finish(lin *Lineage) {
	for _, key := range c.order {
		lin.Writes = append(lin.Writes, *c.writes[key])
	}
	for _, key := range slices.Sorted(maps.Keys(c.reads)) {
		if _, written := c.writes[key]; written && c.reads[key].Kind == "view" {
			continue
		}
		lin.Reads = append(lin.Reads, *c.reads[key])
	}
	lin.Edges = sortedEdges(c.edges)
	lin.RowDeps = sortedEdges(c.rows)
}

// sortedEdges renders edges sorted by target, then source.
func sortedEdges(m map[[2]string]dep) []Edge {
	out := make([]Edge, 0, len(m))
	for pair, d := range m {
		out = append(out, Edge{Source: pair[0], Target: pair[1], Transformations: d.transformations()})
	}
	SortEdges(out)
	return out
}

// SortEdges sorts edges as a Lineage holds them: by target, then source.
func SortEdges(edges []Edge) {
	sort.Slice(edges, func(a, b int) bool {
		x, y := edges[a], edges[b]
		if x.Target != y.Target {
			return x.Target < y.Target
		}
		return x.Source < y.Source
	})
}
