package openlineage

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/colline/colline/openlineage/alias"
	"github.com/colline/colline/plan"
)

// SessionCatalog is colline's namespace of the tables of Spark's session catalog, which is a Hive
// metastore or a file-system warehouse: plan.Identify keys such a table spark_catalog/db.table.
const SessionCatalog = "spark_catalog"

// Names turns OpenLineage dataset identities (namespace and name, spec/Naming.md) into colline's
// dataset keys, so that a table is one node whichever tool reported it:
//
//   - A dataset with a TABLE identifier in its symlinks facet is that table (its own identity, a
//     path, becomes the location). openlineage-spark reports catalog tables so: by location, with
//     the table as a symlink whose namespace is the metastore (hive://host:port) or the warehouse
//     (file:/…/warehouse).
//   - A table of a Hive metastore or of a file-system warehouse (the namespace of such a symlink,
//     or a dataset in a hive:// namespace) is a table of Spark's session catalog:
//     spark_catalog/db.table, the key the listener gives it.
//   - Any other identity is keyed by plan.Named: a path or a Kafka topic has the key the listener
//     gives it; a table of another system keeps its namespace (postgres://db:5432/shop.public.t).
//   - A Kafka topic of a server that COLLINE_KAFKA_CLUSTERS names is keyed by its cluster
//     (kafka://<cluster>/<topic>), as the listener's are.
//   - Then the first alias whose From is a prefix of the key replaces that prefix by its To
//     (longest From first): how a tool that names the same table its own way, without symlinks
//     (DuckDB reading the lake, Trino's hive catalog), joins it.
//
// The zero value applies the rules without aliases.
type Names struct {
	Aliases  []alias.Rule   // alias.Parse of COLLINE_OPENLINEAGE_ALIASES
	Clusters alias.Clusters // alias.ParseClusters of COLLINE_KAFKA_CLUSTERS: kafka://<server> → kafka://<cluster>
}

// Dataset returns the colline dataset an OpenLineage identity stands for, given the dataset's
// symlinks (nil when none).
func (n Names) Dataset(namespace, name string, symlinks []Symlink) plan.Dataset {
	var d plan.Dataset
	switch t := tableSymlink(symlinks); {
	case t != nil:
		d = plan.Named(tableNamespace(t.Namespace), t.Name)
		if plan.FileSystem(namespace) {
			d.Location = plan.Named(namespace, name).Location
		}
	case scheme(namespace) == "hive":
		d = plan.Named(SessionCatalog, name)
	case scheme(namespace) == "kafka" && n.Clusters.Of(namespace) != "":
		d = plan.Named("kafka://"+n.Clusters.Of(namespace), name)
	default:
		d = plan.Named(namespace, name)
	}
	return n.alias(d)
}

func (n Names) alias(d plan.Dataset) plan.Dataset {
	for _, a := range n.Aliases {
		if rest, ok := strings.CutPrefix(d.Key, a.From); ok {
			ns, prefix, _ := alias.SplitKey(a.To)
			x := plan.Named(ns, prefix+rest)
			x.Location = cmp.Or(d.Location, x.Location)
			return x
		}
	}
	return d
}

// tableSymlink returns the first identifier of type TABLE.
func tableSymlink(links []Symlink) *Symlink {
	for i := range links {
		if strings.EqualFold(links[i].Type, "TABLE") && links[i].Name != "" {
			return &links[i]
		}
	}
	return nil
}

// tableNamespace is colline's namespace for a table symlink's namespace: Spark's session catalog
// for a Hive metastore or a file-system warehouse, else the namespace itself.
func tableNamespace(ns string) string {
	if scheme(ns) == "hive" || plan.FileSystem(ns) {
		return SessionCatalog
	}
	return ns
}

func scheme(ns string) string {
	s, _, _ := strings.Cut(ns, ":")
	return strings.ToLower(s)
}

// Lineage maps the event onto colline's lineage model (docs/openlineage.md, "Accept"): inputs
// are Reads, outputs Writes (the dataset of a DatasetEvent is a write of nothing but its own
// column lineage), with their schema fields as columns; each output's columnLineage facet gives
// the Edges (fields) and RowDeps (dataset); a lifecycleStateChange of DROP, TRUNCATE or RENAME
// gives a Change, OVERWRITE the write mode. A facet that cannot be read is an *InvalidError.
func (e *Event) Lineage(n Names) (*plan.Lineage, error) {
	m := mapper{names: n, ids: map[string]plan.Dataset{}, sets: map[string]*plan.Dataset{}, edges: map[[2]string]*plan.Edge{}, deps: map[[2]string]*plan.Edge{}}
	var outputs []Dataset
	var inputs []Dataset
	switch e.Kind {
	case DatasetEvent:
		if e.Dataset != nil {
			outputs = []Dataset{*e.Dataset}
		}
	default:
		inputs, outputs = e.Inputs, e.Outputs
	}
	// identities first: a column lineage input field names its dataset by the identity the
	// producer gave it in inputs, whose symlinks say which table it is
	for side, list := range [][]Dataset{inputs, outputs} {
		for i := range list {
			if err := m.identify(&list[i], fmt.Sprintf("/%s/%d", [...]string{"inputs", "outputs"}[side], i)); err != nil {
				return nil, err
			}
		}
	}
	for i := range inputs {
		d, err := m.dataset(&inputs[i])
		if err != nil {
			return nil, m.invalid(fmt.Sprintf("/inputs/%d/facets/schema", i), err)
		}
		m.read(d.Key)
	}
	for i := range outputs {
		loc := fmt.Sprintf("/outputs/%d", i)
		if e.Kind == DatasetEvent {
			loc = "/dataset"
		}
		if err := m.output(&outputs[i], loc); err != nil {
			return nil, err
		}
	}
	lin := m.lineage()
	for side, list := range [][]Dataset{inputs, outputs} {
		for i := range list {
			dt, err := m.tags(&list[i])
			if err != nil {
				loc := fmt.Sprintf("/%s/%d/facets/tags", [...]string{"inputs", "outputs"}[side], i)
				if e.Kind == DatasetEvent {
					loc = "/dataset/facets/tags"
				}
				return nil, m.invalid(loc, err)
			}
			if dt != nil && !slices.ContainsFunc(lin.Tags, func(x plan.DatasetTags) bool { return x.Dataset == dt.Dataset }) {
				lin.Tags = append(lin.Tags, *dt)
			}
		}
	}
	return lin, nil
}

// tags maps a dataset's tags facet (TagsDatasetFacet): its field-level tags, as the whole set the
// producer gives the dataset's columns (nil when it has no such facet). A tag without a field
// tags the dataset, which colline does not follow: it is left out.
func (m *mapper) tags(d *Dataset) (*plan.DatasetTags, error) {
	ts, ok, err := d.Tags()
	if !ok || err != nil {
		return nil, err
	}
	id := m.ids[idKey(d.Namespace, d.Name)]
	dt := &plan.DatasetTags{Dataset: id.Key, Source: SourceTags}
	for _, t := range ts {
		if t.Field == "" || t.Key == "" {
			continue
		}
		src := SourceTags
		if t.Source != "" {
			src += ":" + t.Source
		}
		v := t.Value
		if v == "" {
			v = "true"
		}
		dt.Tags = append(dt.Tags, plan.ColumnTag{Column: plan.ColumnKey(id.Key, t.Field), Key: t.Key, Value: v, Source: src})
	}
	return dt, nil
}

// SourceTags is the source of the tags of a TagsDatasetFacet (docs/tags.md).
const SourceTags = "openlineage"

// mapper builds one event's lineage.
type mapper struct {
	names  Names
	ids    map[string]plan.Dataset  // OpenLineage namespace + "\x00" + name → identity
	sets   map[string]*plan.Dataset // by key, with columns
	order  []string                 // keys in the order first seen
	reads  []string
	writes []plan.Write
	edges  map[[2]string]*plan.Edge
	deps   map[[2]string]*plan.Edge
	change []plan.Change
}

func idKey(namespace, name string) string { return namespace + "\x00" + name }

func (m *mapper) invalid(loc string, err error) error {
	return &InvalidError{Problems: []Problem{{Location: loc, Message: err.Error()}}}
}

func (m *mapper) identify(d *Dataset, loc string) error {
	links, err := d.Symlinks()
	if err != nil {
		return m.invalid(loc+"/facets/symlinks", err)
	}
	m.ids[idKey(d.Namespace, d.Name)] = m.names.Dataset(d.Namespace, d.Name, links)
	return nil
}

// rows is plan.Transformation.Rows of a transformation's RowsFrom: the keys of its datasets,
// sorted, one a line ("" when it has none: every row).
func (m *mapper) rows(from []DatasetName) string {
	var keys []string
	for _, d := range from {
		if d.Namespace == "" && d.Name == plan.InlineRows {
			keys = append(keys, plan.InlineRows)
			continue
		}
		id, ok := m.ids[idKey(d.Namespace, d.Name)]
		if !ok {
			id = m.names.Dataset(d.Namespace, d.Name, nil)
		}
		keys = append(keys, id.Key)
	}
	slices.Sort(keys)
	return strings.Join(slices.Compact(keys), "\n")
}

// resolve returns the colline dataset of an OpenLineage identity named in the event.
func (m *mapper) resolve(namespace, name string) *plan.Dataset {
	id, ok := m.ids[idKey(namespace, name)]
	if !ok {
		id = m.names.Dataset(namespace, name, nil)
		m.ids[idKey(namespace, name)] = id
	}
	d := m.sets[id.Key]
	if d == nil {
		c := id
		c.Columns = nil
		d = &c
		m.sets[id.Key] = d
		m.order = append(m.order, id.Key)
	} else if d.Location == "" {
		d.Location = id.Location
	}
	return d
}

// column adds a column to d if it is not there, and returns its key; typ fills an unknown type.
// A name that is the dotted path of a struct field of d's schema (fields) is that field.
func column(d *plan.Dataset, name, typ string) string {
	key := plan.ColumnKey(d.Key, name)
	for i := range d.Columns {
		if c := &d.Columns[i]; c.Key == key || (c.Parent != "" && strings.EqualFold(c.Name, name)) {
			if c.Type == "" {
				c.Type = typ
			}
			return c.Key
		}
	}
	d.Columns = append(d.Columns, plan.Column{Key: key, Name: name, Type: typ})
	return key
}

// fields adds the nested struct fields of a schema field (key, at path) to d, depth first.
func fields(d *plan.Dataset, key string, path []string, nested []SchemaField) {
	for _, f := range nested {
		if f.Name == "" {
			continue
		}
		p := append(slices.Clone(path), f.Name)
		k := plan.FieldKey(d.Key, p[0], p[1:]...)
		if !slices.ContainsFunc(d.Columns, func(c plan.Column) bool { return c.Key == k }) {
			d.Columns = append(d.Columns, plan.Column{Key: k, Name: strings.Join(p, "."), Type: f.Type, Parent: key})
		}
		fields(d, k, p, f.Fields)
	}
}

// dataset resolves d and adds its schema fields as columns.
func (m *mapper) dataset(d *Dataset) (*plan.Dataset, error) {
	x := m.resolve(d.Namespace, d.Name)
	schema, err := d.Schema()
	if err != nil {
		return nil, err
	}
	for _, f := range schema {
		if f.Name != "" {
			fields(x, column(x, f.Name, f.Type), []string{f.Name}, f.Fields)
		}
	}
	return x, nil
}

func (m *mapper) read(key string) {
	if !slices.Contains(m.reads, key) {
		m.reads = append(m.reads, key)
	}
}

// output maps one output: its columns, lifecycle change and column lineage.
func (m *mapper) output(d *Dataset, loc string) error {
	x, err := m.dataset(d)
	if err != nil {
		return m.invalid(loc+"/facets/schema", err)
	}
	var lc struct {
		State    string `json:"lifecycleStateChange"`
		Previous *struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"previousIdentifier"`
	}
	if _, err := facet(d.Facets, "lifecycleStateChange", &lc); err != nil {
		return m.invalid(loc+"/facets/lifecycleStateChange", err)
	}
	mode := ""
	switch lc.State {
	case "OVERWRITE":
		mode = "overwrite"
	case "DROP":
		m.change = append(m.change, plan.Change{Action: plan.ChangeDrop, Dataset: m.identity(x)})
	case "TRUNCATE":
		m.change = append(m.change, plan.Change{Action: plan.ChangeTruncate, Dataset: m.identity(x)})
	case "RENAME":
		if lc.Previous != nil {
			old := m.identity(m.resolve(lc.Previous.Namespace, lc.Previous.Name))
			to := m.identity(x)
			m.change = append(m.change, plan.Change{Action: plan.ChangeRename, Dataset: old, To: &to})
		}
	}
	if lc.State != "DROP" && lc.State != "TRUNCATE" {
		if i := slices.IndexFunc(m.writes, func(w plan.Write) bool { return w.Key == x.Key }); i < 0 {
			m.writes = append(m.writes, plan.Write{Dataset: plan.Dataset{Key: x.Key}, Mode: mode})
		} else if mode != "" {
			m.writes[i].Mode = mode
		}
	}
	cl, err := d.ColumnLineage()
	if err != nil {
		return m.invalid(loc+"/facets/columnLineage", err)
	}
	if cl == nil {
		return nil
	}
	fields := make([]string, 0, len(cl.Fields))
	for f := range cl.Fields {
		fields = append(fields, f)
	}
	slices.Sort(fields)
	for _, f := range fields {
		fl := cl.Fields[f]
		target := column(x, f, "")
		for _, in := range fl.InputFields {
			src := m.source(in)
			add(m.edges, src, target, transformations(in.Transformations, fl))
		}
	}
	for _, in := range cl.Dataset {
		src := m.source(in)
		ts := transformations(in.Transformations, FieldLineage{})
		for k := range ts {
			if k < len(in.Transformations) {
				ts[k].Rows = m.rows(in.Transformations[k].RowsFrom)
			}
		}
		add(m.deps, src, x.Key, ts)
	}
	return nil
}

// identity is d without columns, for a Change.
func (m *mapper) identity(d *plan.Dataset) plan.Dataset {
	c := *d
	c.Columns = nil
	return c
}

// source is the column key of an input field, its dataset a read of the event.
func (m *mapper) source(in InputField) string {
	d := m.resolve(in.Namespace, in.Name)
	m.read(d.Key)
	return column(d, in.Field, "")
}

// add merges transformations into the edge source → target.
func add(edges map[[2]string]*plan.Edge, source, target string, ts []plan.Transformation) {
	k := [2]string{source, target}
	e := edges[k]
	if e == nil {
		e = &plan.Edge{Source: source, Target: target}
		edges[k] = e
	}
	for _, t := range ts {
		if !slices.Contains(e.Transformations, t) {
			e.Transformations = append(e.Transformations, t)
		}
	}
}

// transformations maps an input field's transformations. Without any, the field's deprecated
// transformationType says IDENTITY or something else; without that either (dbt-ol's column
// lineage), the input feeds the value in a way the producer did not say: DIRECT/TRANSFORMATION.
func transformations(ts []Transformation, fl FieldLineage) []plan.Transformation {
	out := make([]plan.Transformation, 0, max(len(ts), 1))
	for _, t := range ts {
		x := plan.Transformation{Type: strings.ToUpper(t.Type), Subtype: strings.ToUpper(t.Subtype), Masking: t.Masking, Expr: plan.Truncate(t.Description)}
		if x.Type == plan.Direct && x.Subtype == "" {
			x.Subtype = plan.TransformationSub
		}
		out = append(out, x)
	}
	if len(out) > 0 {
		return out
	}
	x := plan.Transformation{Type: plan.Direct, Subtype: plan.TransformationSub, Expr: plan.Truncate(fl.TransformationDescription)}
	switch strings.ToUpper(fl.TransformationType) {
	case "IDENTITY":
		x.Subtype = plan.Identity
	case "MASKED":
		x.Masking = true
	}
	return []plan.Transformation{x}
}

// lineage assembles the result, sorted as plan.Extract sorts its own.
func (m *mapper) lineage() *plan.Lineage {
	lin := &plan.Lineage{Unknown: map[string]int{}}
	for _, k := range m.reads {
		lin.Reads = append(lin.Reads, *m.sets[k])
	}
	for _, w := range m.writes {
		w.Dataset = *m.sets[w.Key]
		lin.Writes = append(lin.Writes, w)
	}
	lin.Changes = m.change
	lin.Edges = sortedEdges(m.edges)
	lin.RowDeps = sortedEdges(m.deps)
	return lin
}

func sortedEdges(m map[[2]string]*plan.Edge) []plan.Edge {
	out := make([]plan.Edge, 0, len(m))
	for _, e := range m {
		out = append(out, *e)
	}
	plan.SortEdges(out)
	return out
}

// Parent is a run's parent facet: the run and job it was spawned from, and the root job of the
// chain when the producer names it.
type Parent struct {
	RunID            string
	JobNamespace     string
	JobName          string
	RootJobNamespace string
	RootJobName      string
}

// Parent decodes the run's parent facet; nil when it has none.
func (r *Run) Parent() (*Parent, error) {
	var p struct {
		Run struct {
			RunID string `json:"runId"`
		} `json:"run"`
		Job struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"job"`
		Root *struct {
			Job struct {
				Namespace string `json:"namespace"`
				Name      string `json:"name"`
			} `json:"job"`
		} `json:"root"`
	}
	ok, err := facet(r.Facets, "parent", &p)
	if !ok || err != nil || p.Run.RunID == "" {
		return nil, err
	}
	out := &Parent{RunID: p.Run.RunID, JobNamespace: p.Job.Namespace, JobName: p.Job.Name}
	if p.Root != nil {
		out.RootJobNamespace, out.RootJobName = p.Root.Job.Namespace, p.Root.Job.Name
	}
	return out, nil
}

// MessageKey is the Kafka message key openlineage's Kafka transport gives an event, so that the
// events of a job, and of a chain of parent and child runs, stay in order on one partition:
// "run:<namespace>/<name>" of the root job, else the parent job, else the run's own job;
// "job:<namespace>/<name>" for a JobEvent; "dataset:<namespace>/<name>" for a DatasetEvent.
func MessageKey(e *Event) string {
	switch {
	case e.Kind == DatasetEvent && e.Dataset != nil:
		return "dataset:" + e.Dataset.Namespace + "/" + e.Dataset.Name
	case e.Kind == JobEvent && e.Job != nil:
		return "job:" + e.Job.Namespace + "/" + e.Job.Name
	case e.Job == nil:
		return ""
	}
	ns, name := e.Job.Namespace, e.Job.Name
	if e.Run != nil {
		if p, err := e.Run.Parent(); err == nil && p != nil {
			switch {
			case p.RootJobName != "":
				ns, name = p.RootJobNamespace, p.RootJobName
			case p.JobName != "":
				ns, name = p.JobNamespace, p.JobName
			}
		}
	}
	return "run:" + ns + "/" + name
}

// mapped are the facets Lineage and Parent read, by name.
var mapped = map[string]bool{"columnLineage": true, "schema": true, "symlinks": true, "lifecycleStateChange": true, "parent": true, "tags": true}

// Maps reports whether colline reads the facet of this name (a dataset's columnLineage, schema,
// symlinks, lifecycleStateChange and tags, a run's parent): a problem in any other facet does not change
// the lineage colline takes from the event.
func Maps(facet string) bool { return mapped[facet] }

// FacetOf returns the name of the facet a JSON location of an event is in ("dataSource" for
// /inputs/0/facets/dataSource/uri), or "" for a location outside any facet.
func FacetOf(location string) string {
	parts := strings.Split(location, "/")
	for i := 1; i+1 < len(parts); i++ {
		switch parts[i] {
		case "facets", "inputFacets", "outputFacets":
			inFacets := (i == 2 && (parts[1] == "run" || parts[1] == "job" || parts[1] == "dataset")) ||
				(i == 3 && (parts[1] == "inputs" || parts[1] == "outputs"))
			if inFacets {
				return strings.ReplaceAll(strings.ReplaceAll(parts[i+1], "~1", "/"), "~0", "~")
			}
		}
	}
	return ""
}
