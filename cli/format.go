package cli

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
)

// Formats are the output formats of explain.
var Formats = []string{"table", "dot", "mermaid", "json", "openlineage"}

// Write renders evs to w in format (one of Formats).
func Write(w io.Writer, format string, evs []Event) error {
	switch format {
	case "table":
		return writeTable(w, evs)
	case "dot":
		return writeDOT(w, evs)
	case "mermaid":
		return writeMermaid(w, evs)
	case "json":
		return writeJSON(w, evs)
	case "openlineage":
		return writeOpenLineage(w, evs)
	}
	return fmt.Errorf("unknown format %q: use one of %s", format, strings.Join(Formats, ", "))
}

// writeTable prints, per event, a header (file, job, query, datasets), then one row per
// transformation of its column edges and of its row-level dependencies.
func writeTable(w io.Writer, evs []Event) error {
	for i, ev := range evs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		env, lin := ev.Env, ev.Lineage
		fmt.Fprintf(w, "# %s\n", visible(ev.Source))
		status := visible(env.Query.Status)
		if env.Markers.Analyzed {
			status = "analyzed, not run"
		}
		fmt.Fprintf(w, "job     %s  (app %s, query %d, %s, %s)\n", visible(record.JobKey(env.App)), visible(env.App.ID),
			env.Query.ExecutionID, visible(env.Query.FuncName), status)
		fmt.Fprintf(w, "reads   %s\n", datasetList(lin.Reads))
		writes := make([]string, 0, len(lin.Writes))
		for _, d := range lin.Writes {
			var notes []string
			if d.Mode != "" {
				notes = append(notes, d.Mode)
			}
			if lin.TableLevel() {
				notes = append(notes, "column lineage missing")
			}
			s := d.Key
			if len(notes) > 0 {
				s += " (" + strings.Join(notes, "; ") + ")"
			}
			writes = append(writes, visible(s))
		}
		fmt.Fprintf(w, "writes  %s\n", orNone(writes))
		for _, c := range lin.Changes {
			fmt.Fprintf(w, "change  %s\n", visible(c.String()))
		}
		if len(lin.Unknown) > 0 {
			fmt.Fprintf(w, "unknown %s\n", unknownList(lin.Unknown))
		}
		if len(lin.Edges) == 0 && len(lin.RowDeps) == 0 {
			note := "no column lineage"
			switch {
			case env.Markers.NestedWrite:
				note += ": a nested write, the outer command's event carries it"
			case lin.TableLevel():
				note = missingNote(lin)
			}
			fmt.Fprintf(w, "(%s)\n", note)
			continue
		}
		// one row per transformation: a column playing several roles has several rows; a
		// row-level dependency's target is the written dataset, marked "(rows)"
		// a struct field (a column's part, nested.go in plan/) is marked "(field)"
		fields := map[string]bool{}
		inferred := map[string]bool{}
		for _, list := range [][]plan.Dataset{lin.Reads, writeDatasets(lin.Writes)} {
			for _, d := range list {
				for _, c := range d.Columns {
					fields[c.Key] = c.Parent != ""
					inferred[c.Key] = d.Inferred
				}
			}
		}
		// a column of a table whose schema colline analyze inferred is marked "(inferred)"
		mark := func(key string) string {
			s := visible(key)
			if fields[key] {
				s += " (field)"
			}
			if inferred[key] {
				s += " (inferred)"
			}
			return s
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SOURCE\tTARGET\tTYPE\tSUBTYPE\tMASKING\tEXPR")
		for _, set := range []struct {
			edges  []plan.Edge
			suffix string
		}{{lin.Edges, ""}, {lin.RowDeps, " (rows)"}} {
			for _, e := range set.edges {
				for _, t := range e.Transformations {
					masking := "-"
					if t.Masking {
						masking = "yes"
					}
					suffix := set.suffix
					if t.Rows != "" { // a row-level dependency of some UNION branches only
						suffix = " (rows from " + visible(strings.Join(t.RowSources(), ", ")) + ")"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", mark(e.Source), mark(e.Target)+suffix, t.Type, t.Subtype, masking, oneLine(t.Expr))
				}
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// degradedNote says what a degraded event's lineage lacks, in every format.
const degradedNote = "column lineage missing: a degraded event (markers.truncated: the listener cut the plan to fit spark.colline.event.maxBytes); " +
	"reads, writes and written columns are complete, which columns feed which is not known"

// missingNote says why a table-level lineage has no column lineage: a degraded event, or a plan
// over an extraction budget.
func missingNote(lin *plan.Lineage) string {
	if lin.Degraded {
		return degradedNote
	}
	return "column lineage missing: the plan is over an extraction budget (" + lin.OverBudget.Error() +
		"); reads, writes and written columns are complete, which columns feed which was not extracted"
}

// overBudgetName is the budget lin was over, or "".
func overBudgetName(lin *plan.Lineage) string {
	if lin.OverBudget == nil {
		return ""
	}
	return lin.OverBudget.Budget
}

func writeDatasets(ws []plan.Write) []plan.Dataset {
	out := make([]plan.Dataset, len(ws))
	for k := range ws {
		out[k] = ws[k].Dataset
	}
	return out
}

func datasetList(ds []plan.Dataset) string {
	keys := make([]string, 0, len(ds))
	for _, d := range ds {
		if d.Inferred {
			keys = append(keys, visible(d.Key)+" (inferred schema)")
			continue
		}
		keys = append(keys, visible(d.Key))
	}
	return orNone(keys)
}

func unknownList(m map[string]int) string {
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, visible(c)+"×"+strconv.Itoa(m[c]))
	}
	return strings.Join(parts, ", ")
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ", ")
}

func oneLine(s string) string {
	if s == "" {
		return "-"
	}
	return visible(strings.Join(strings.Fields(s), " "))
}

// visible escapes what a terminal or a renderer would not show as itself: control characters
// (newlines, tabs, ESC), format characters (bidirectional overrides) and invalid UTF-8 become
// \n, \t, \xNN or \uNNNN, so that a name cannot break a table row or a graph's syntax, nor
// colour, move or hide text. Printable text is unchanged.
func visible(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) && r != ' ' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == ' ' || unicode.IsPrint(r):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRune(r) // '\n', '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

// lineageGraph is the union of the lineage of several events: columns grouped by dataset, and
// edges without duplicates (the same pair written by two jobs is one edge with the union of
// their transformations).
type lineageGraph struct {
	datasets []string            // sorted dataset keys
	columns  map[string][]string // dataset key -> sorted column keys
	names    map[string]string   // column key -> column name
	edges    []plan.Edge         // column -> column, sorted by source and target
	rowDeps  []plan.Edge         // column -> dataset, sorted by source and target
	missing  map[string]string   // datasets written by a degraded event or a plan over budget: why their column lineage is missing
}

func union(evs []Event) lineageGraph {
	g := lineageGraph{columns: map[string][]string{}, names: map[string]string{}, missing: map[string]string{}}
	owner := map[string]string{}
	add := func(d plan.Dataset) {
		if _, ok := g.columns[d.Key]; !ok {
			g.columns[d.Key] = nil
		}
		for _, c := range d.Columns {
			if _, ok := owner[c.Key]; !ok {
				owner[c.Key] = d.Key
				g.names[c.Key] = c.Name
				g.columns[d.Key] = append(g.columns[d.Key], c.Key)
			}
		}
	}
	edges, rows := map[[2]string]*plan.Edge{}, map[[2]string]*plan.Edge{}
	merge := func(m map[[2]string]*plan.Edge, e plan.Edge) {
		k := [2]string{e.Source, e.Target}
		cur := m[k]
		if cur == nil {
			m[k] = &plan.Edge{Source: e.Source, Target: e.Target, Transformations: slices.Clone(e.Transformations)}
			return
		}
		for _, t := range e.Transformations {
			if !slices.ContainsFunc(cur.Transformations, func(x plan.Transformation) bool {
				return x.Type == t.Type && x.Subtype == t.Subtype && x.Masking == t.Masking
			}) {
				cur.Transformations = append(cur.Transformations, t)
			}
		}
	}
	for _, ev := range evs {
		for _, d := range ev.Lineage.Reads {
			add(d)
		}
		for _, d := range ev.Lineage.Writes {
			add(d.Dataset)
			switch {
			case ev.Lineage.Degraded:
				g.missing[d.Key] = "degraded event"
			case ev.Lineage.OverBudget != nil:
				g.missing[d.Key] = "over the " + ev.Lineage.OverBudget.Budget + " budget"
			}
		}
		for _, e := range ev.Lineage.Edges {
			merge(edges, e)
		}
		for _, e := range ev.Lineage.RowDeps {
			merge(rows, e)
		}
	}
	g.datasets = slices.Sorted(maps.Keys(g.columns))
	for _, cols := range g.columns {
		slices.Sort(cols)
	}
	g.edges, g.rowDeps = sortedEdges(edges), sortedEdges(rows)
	return g
}

func sortedEdges(m map[[2]string]*plan.Edge) []plan.Edge {
	out := make([]plan.Edge, 0, len(m))
	for _, e := range m {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b plan.Edge) int {
		return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Target, b.Target))
	})
	return out
}

// roleLabel lists every role of an edge: "IDENTITY, CONDITIONAL", "AGGREGATION masked".
func roleLabel(e plan.Edge) string {
	parts := make([]string, 0, len(e.Transformations))
	for _, t := range e.Transformations {
		p := t.Subtype
		if t.Masking {
			p += " masked"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// label is a dataset's title in DOT and Mermaid: its key, and whether some write of it lacks
// column lineage.
func (g lineageGraph) label(d string) string {
	if why := g.missing[d]; why != "" {
		return d + " (column lineage missing: " + why + ")"
	}
	return d
}

// ids numbers the columns in dataset order, for DOT and Mermaid node ids.
func (g lineageGraph) ids() map[string]string {
	ids := map[string]string{}
	for _, d := range g.datasets {
		for _, c := range g.columns[d] {
			ids[c] = "c" + strconv.Itoa(len(ids))
		}
	}
	return ids
}

// writeDOT prints a Graphviz digraph: one cluster per dataset, solid edges where a source is
// part of the value (some DIRECT role), dashed ones where it only decides it, labelled with every
// role; a row-level dependency points at the "rows" node of the written dataset's cluster.
func writeDOT(w io.Writer, evs []Event) error {
	g := union(evs)
	ids := g.ids()
	decided := map[string]bool{}
	for _, e := range g.rowDeps {
		decided[e.Target] = true
	}
	var b strings.Builder
	b.WriteString("digraph colline {\n  rankdir=LR;\n  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n")
	rowsNode := map[string]string{}
	for i, d := range g.datasets {
		fmt.Fprintf(&b, "  subgraph cluster_%d {\n    label=%s;\n", i, dotText(g.label(d)))
		if g.missing[d] != "" {
			b.WriteString("    style=dashed;\n")
		}
		for _, c := range g.columns[d] {
			fmt.Fprintf(&b, "    %s [label=%s];\n", ids[c], dotText(g.names[c]))
		}
		if decided[d] {
			rowsNode[d] = "r" + strconv.Itoa(i)
			fmt.Fprintf(&b, "    %s [label=\"(rows)\", shape=plaintext];\n", rowsNode[d])
		}
		b.WriteString("  }\n")
	}
	for _, e := range g.edges {
		attrs := "label=" + strconv.Quote(roleLabel(e))
		if !e.Direct() {
			attrs += ", style=dashed, color=gray50, fontcolor=gray50"
		}
		if e.Summary().Masking {
			attrs += ", arrowhead=odot"
		}
		fmt.Fprintf(&b, "  %s -> %s [%s];\n", ids[e.Source], ids[e.Target], attrs)
	}
	for _, e := range g.rowDeps {
		fmt.Fprintf(&b, "  %s -> %s [label=%s, style=dotted, color=gray50, fontcolor=gray50];\n", ids[e.Source], rowsNode[e.Target], strconv.Quote(roleLabel(e)))
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// dotText quotes a label for DOT: escaped by visible first, so that a newline in a name shows as
// \n rather than breaking the label into lines (DOT reads \n in a label as a line break), then
// quoted (a backslash becomes \\, which DOT shows as one backslash).
func dotText(s string) string { return strconv.Quote(visible(s)) }

// writeMermaid prints a Mermaid flowchart: one subgraph per dataset, solid edges where a source
// is part of the value, dotted ones where it only decides it, labelled with every role; a
// row-level dependency points at the written dataset's subgraph.
func writeMermaid(w io.Writer, evs []Event) error {
	g := union(evs)
	ids := g.ids()
	sub := map[string]string{}
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for i, d := range g.datasets {
		sub[d] = "d" + strconv.Itoa(i)
		fmt.Fprintf(&b, "  subgraph %s[\"%s\"]\n", sub[d], mermaidText(g.label(d)))
		for _, c := range g.columns[d] {
			fmt.Fprintf(&b, "    %s[\"%s\"]\n", ids[c], mermaidText(g.names[c]))
		}
		b.WriteString("  end\n")
	}
	for _, e := range g.edges {
		arrow := "-->"
		if !e.Direct() {
			arrow = "-.->"
		}
		fmt.Fprintf(&b, "  %s %s|%s| %s\n", ids[e.Source], arrow, mermaidText(roleLabel(e)), ids[e.Target])
	}
	for _, e := range g.rowDeps {
		fmt.Fprintf(&b, "  %s -.->|%s| %s\n", ids[e.Source], mermaidText("rows: "+roleLabel(e)), sub[e.Target])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mermaidText escapes a label for use inside Mermaid quotes: visible's escapes, then Mermaid's
// entity codes for what would end the label or be read as markup (#, ", |, <, >, `).
func mermaidText(s string) string {
	return strings.NewReplacer("#", "#35;", `"`, "#quot;", "|", "#124;", "<", "#lt;", ">", "#gt;", "`", "#96;").Replace(visible(s))
}

// jsonEvent is the JSON form of one event's lineage. Each write carries its column lineage in
// the shape of OpenLineage's ColumnLineageDatasetFacet (docs/lineage-semantics.md).
type jsonEvent struct {
	Source      string         `json:"source"`
	EventID     string         `json:"eventId"`
	Job         string         `json:"job"`
	AppID       string         `json:"appId"`
	ExecutionID int64          `json:"executionId"`
	FuncName    string         `json:"funcName"`
	Status      string         `json:"status"`
	Analyzed    bool           `json:"analyzed,omitempty"` // colline analyze: lineage of SQL that did not run
	EndedAt     string         `json:"endedAt,omitempty"`
	Degraded    bool           `json:"degraded,omitempty"`   // markers.truncated: no write has column lineage
	OverBudget  string         `json:"overBudget,omitempty"` // the extraction budget the plan was over: no write has column lineage
	Reads       []jsonDataset  `json:"reads"`
	Writes      []jsonDataset  `json:"writes"`
	Unknown     map[string]int `json:"unknownNodes,omitempty"`
}

type jsonDataset struct {
	Key           string             `json:"key"`
	Namespace     string             `json:"namespace"`
	Name          string             `json:"name"`
	Kind          string             `json:"kind"`
	Location      string             `json:"location,omitempty"`
	Mode          string             `json:"mode,omitempty"`
	Inferred      bool               `json:"inferred,omitempty"` // colline analyze inferred its schema
	Columns       []string           `json:"columns"`
	Fields        []string           `json:"fields,omitempty"`        // struct fields of the columns, dotted: address.city
	ColumnLineage *jsonColumnLineage `json:"columnLineage,omitempty"` // writes only; absent when missing
	// ColumnLineageMissing says why a write has no columnLineage (writes of a degraded event or of
	// a plan over budget).
	ColumnLineageMissing string `json:"columnLineageMissing,omitempty"`
}

// jsonColumnLineage is OpenLineage's ColumnLineageDatasetFacet (without the facet's _producer
// and _schemaURL): per written field its input fields; dataset-wide, the fields that decide
// which rows are written.
type jsonColumnLineage struct {
	Fields  map[string]jsonField `json:"fields"`
	Dataset []jsonInputField     `json:"dataset"`
}

type jsonField struct {
	InputFields []jsonInputField `json:"inputFields"`
}

type jsonInputField struct {
	Namespace       string               `json:"namespace"`
	Name            string               `json:"name"`
	Field           string               `json:"field"`
	Transformations []jsonTransformation `json:"transformations"`
}

type jsonTransformation struct {
	Type        string `json:"type"`
	Subtype     string `json:"subtype"`
	Description string `json:"description,omitempty"`
	Masking     bool   `json:"masking"`
	// RowsFrom: the keys of the datasets whose rows a row-level dependency decides, when it
	// decides those of some UNION branches only (plan.Transformation.Rows)
	RowsFrom []string `json:"rowsFrom,omitempty"`
}

// writeJSON prints one JSON array with an object per event.
func writeJSON(w io.Writer, evs []Event) error {
	out := make([]jsonEvent, 0, len(evs))
	ds := func(d plan.Dataset, mode string) jsonDataset {
		j := jsonDataset{Key: d.Key, Namespace: d.Namespace, Name: d.Name, Kind: d.Kind, Location: d.Location, Mode: mode,
			Inferred: d.Inferred, Columns: make([]string, 0, len(d.Columns))}
		for _, c := range d.Columns {
			if c.Parent != "" {
				j.Fields = append(j.Fields, c.Name)
				continue
			}
			j.Columns = append(j.Columns, c.Name)
		}
		return j
	}
	for _, ev := range evs {
		env, lin := ev.Env, ev.Lineage
		j := jsonEvent{
			Source: ev.Source, EventID: env.EventID, Job: record.JobKey(env.App), AppID: env.App.ID,
			ExecutionID: env.Query.ExecutionID, FuncName: env.Query.FuncName, Status: env.Query.Status,
			Analyzed: env.Markers.Analyzed, EndedAt: env.Query.EndedAt, Unknown: lin.Unknown, Degraded: lin.Degraded,
			OverBudget: overBudgetName(lin), Reads: []jsonDataset{}, Writes: []jsonDataset{},
		}
		// column key -> its dataset and name, for the facet's (namespace, name, field)
		type colRef struct {
			ds   *plan.Dataset
			name string
		}
		cols := map[string]colRef{}
		for k := range lin.Reads {
			j.Reads = append(j.Reads, ds(lin.Reads[k], ""))
			for _, c := range lin.Reads[k].Columns {
				cols[c.Key] = colRef{&lin.Reads[k], c.Name}
			}
		}
		for k := range lin.Writes {
			for _, c := range lin.Writes[k].Columns {
				cols[c.Key] = colRef{&lin.Writes[k].Dataset, c.Name}
			}
		}
		input := func(e plan.Edge) jsonInputField {
			c := cols[e.Source]
			f := jsonInputField{Field: c.name, Transformations: make([]jsonTransformation, 0, len(e.Transformations))}
			if c.ds != nil {
				f.Namespace, f.Name = c.ds.Namespace, c.ds.Name
			}
			for _, t := range e.Transformations {
				f.Transformations = append(f.Transformations, jsonTransformation{t.Type, t.Subtype, t.Expr, t.Masking, t.RowSources()})
			}
			return f
		}
		for k := range lin.Writes {
			d := &lin.Writes[k]
			jd := ds(d.Dataset, d.Mode)
			if lin.TableLevel() {
				jd.ColumnLineageMissing = missingNote(lin)
				j.Writes = append(j.Writes, jd)
				continue
			}
			cl := &jsonColumnLineage{Fields: map[string]jsonField{}, Dataset: []jsonInputField{}}
			for _, e := range lin.Edges {
				if c := cols[e.Target]; c.ds == &d.Dataset {
					f := cl.Fields[c.name]
					f.InputFields = append(f.InputFields, input(e))
					cl.Fields[c.name] = f
				}
			}
			for _, e := range lin.RowDeps {
				if e.Target == d.Key {
					cl.Dataset = append(cl.Dataset, input(e))
				}
			}
			jd.ColumnLineage = cl
			j.Writes = append(j.Writes, jd)
		}
		out = append(out, j)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := w.Write(jsonVisible(b.Bytes()))
	return err
}

// writeOpenLineage prints the OpenLineage RunEvent the consumer emits for each event
// (openlineage.FromSpark), one JSON object per line, as openlineage's file transport writes them.
func writeOpenLineage(w io.Writer, evs []Event) error {
	for _, ev := range evs {
		data, err := openlineage.FromSpark(ev.Env, ev.Lineage)
		if err != nil {
			return fmt.Errorf("%s: %w", ev.Source, err)
		}
		if _, err := w.Write(append(jsonVisible(data), '\n')); err != nil {
			return err
		}
	}
	return nil
}

// jsonVisible escapes, as \uXXXX, the characters encoding/json leaves raw that a terminal would
// not show as themselves (format characters such as bidirectional overrides, U+0085): outside
// strings JSON only has ASCII, so every such character is inside a string, and the escaped text
// decodes to the same value.
func jsonVisible(data []byte) []byte {
	var b bytes.Buffer
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r < utf8.RuneSelf || unicode.IsPrint(r) || r == utf8.RuneError && size <= 1 {
			b.Write(data[i : i+size])
		} else if r1, r2 := utf16.EncodeRune(r); r1 != unicode.ReplacementChar {
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		} else {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.Bytes()
}
