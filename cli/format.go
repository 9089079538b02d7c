package cli

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/colline/colline/graph"
	"github.com/colline/colline/plan"
)

// Formats are the output formats of explain.
var Formats = []string{"table", "dot", "mermaid", "json"}

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
	}
	return fmt.Errorf("unknown format %q: use one of %s", format, strings.Join(Formats, ", "))
}

// writeTable prints, per event, a header (file, job, query, datasets) and its column edges.
func writeTable(w io.Writer, evs []Event) error {
	for i, ev := range evs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		env, lin := ev.Env, ev.Lineage
		fmt.Fprintf(w, "# %s\n", ev.Source)
		fmt.Fprintf(w, "job     %s  (app %s, query %d, %s, %s)\n", graph.JobKey(env.App), env.App.ID,
			env.Query.ExecutionID, env.Query.FuncName, env.Query.Status)
		fmt.Fprintf(w, "reads   %s\n", datasetList(lin.Reads))
		writes := make([]string, 0, len(lin.Writes))
		for _, d := range lin.Writes {
			s := d.Key
			if d.Mode != "" {
				s += " (" + d.Mode + ")"
			}
			writes = append(writes, s)
		}
		fmt.Fprintf(w, "writes  %s\n", orNone(writes))
		if len(lin.Unknown) > 0 {
			fmt.Fprintf(w, "unknown %s\n", unknownList(lin.Unknown))
		}
		if len(lin.Edges) == 0 {
			note := "no column lineage"
			if env.Markers.NestedWrite {
				note += ": a nested write, the outer command's event carries it"
			}
			fmt.Fprintf(w, "(%s)\n", note)
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SOURCE\tTARGET\tTYPE\tSUBTYPE\tMASKING\tEXPR")
		for _, e := range lin.Edges {
			masking := "-"
			if e.Masking {
				masking = "yes"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Source, e.Target, e.Type, e.Subtype, masking, oneLine(e.Expr))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func datasetList(ds []plan.Dataset) string {
	keys := make([]string, 0, len(ds))
	for _, d := range ds {
		keys = append(keys, d.Key)
	}
	return orNone(keys)
}

func unknownList(m map[string]int) string {
	var parts []string
	for _, c := range sortedKeys(m) {
		parts = append(parts, c+"×"+strconv.Itoa(m[c]))
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
	return strings.Join(strings.Fields(s), " ")
}

// lineageGraph is the union of the lineage of several events: columns grouped by dataset, and
// edges without duplicates (the same pair written by two jobs is one edge per kind).
type lineageGraph struct {
	datasets []string            // sorted dataset keys
	columns  map[string][]string // dataset key -> sorted column keys
	names    map[string]string   // column key -> column name
	edges    []plan.Edge         // sorted, unique by source, target, type, subtype
}

func union(evs []Event) lineageGraph {
	g := lineageGraph{columns: map[string][]string{}, names: map[string]string{}}
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
	type edgeKey struct{ src, dst, typ, sub string }
	seen := map[edgeKey]bool{}
	for _, ev := range evs {
		for _, d := range ev.Lineage.Reads {
			add(d)
		}
		for _, d := range ev.Lineage.Writes {
			add(d.Dataset)
		}
		for _, e := range ev.Lineage.Edges {
			k := edgeKey{e.Source, e.Target, e.Type, e.Subtype}
			if !seen[k] {
				seen[k] = true
				g.edges = append(g.edges, e)
			}
		}
	}
	g.datasets = sortedKeys(g.columns)
	for _, cols := range g.columns {
		slices.Sort(cols)
	}
	slices.SortFunc(g.edges, func(a, b plan.Edge) int {
		return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Target, b.Target),
			cmp.Compare(a.Type, b.Type), cmp.Compare(a.Subtype, b.Subtype))
	})
	return g
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

// writeDOT prints a Graphviz digraph: one cluster per dataset, solid DIRECT edges, dashed
// INDIRECT ones, labelled with the subtype.
func writeDOT(w io.Writer, evs []Event) error {
	g := union(evs)
	ids := g.ids()
	var b strings.Builder
	b.WriteString("digraph colline {\n  rankdir=LR;\n  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n")
	for i, d := range g.datasets {
		fmt.Fprintf(&b, "  subgraph cluster_%d {\n    label=%s;\n", i, strconv.Quote(d))
		for _, c := range g.columns[d] {
			fmt.Fprintf(&b, "    %s [label=%s];\n", ids[c], strconv.Quote(g.names[c]))
		}
		b.WriteString("  }\n")
	}
	for _, e := range g.edges {
		attrs := "label=" + strconv.Quote(e.Subtype)
		if e.Type == plan.Indirect {
			attrs += ", style=dashed, color=gray50, fontcolor=gray50"
		}
		if e.Masking {
			attrs += ", arrowhead=odot"
		}
		fmt.Fprintf(&b, "  %s -> %s [%s];\n", ids[e.Source], ids[e.Target], attrs)
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMermaid prints a Mermaid flowchart: one subgraph per dataset, solid DIRECT edges, dotted
// INDIRECT ones, labelled with the subtype.
func writeMermaid(w io.Writer, evs []Event) error {
	g := union(evs)
	ids := g.ids()
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for i, d := range g.datasets {
		fmt.Fprintf(&b, "  subgraph d%d[\"%s\"]\n", i, mermaidText(d))
		for _, c := range g.columns[d] {
			fmt.Fprintf(&b, "    %s[\"%s\"]\n", ids[c], mermaidText(g.names[c]))
		}
		b.WriteString("  end\n")
	}
	for _, e := range g.edges {
		label := e.Subtype
		if e.Masking {
			label += ", masked"
		}
		arrow := "-->"
		if e.Type == plan.Indirect {
			arrow = "-.->"
		}
		fmt.Fprintf(&b, "  %s %s|%s| %s\n", ids[e.Source], arrow, mermaidText(label), ids[e.Target])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mermaidText escapes a label for use inside Mermaid quotes.
func mermaidText(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "|", "#124;").Replace(s)
}

// jsonEvent is the JSON form of one event's lineage.
type jsonEvent struct {
	Source      string         `json:"source"`
	EventID     string         `json:"eventId"`
	Job         string         `json:"job"`
	AppID       string         `json:"appId"`
	ExecutionID int64          `json:"executionId"`
	FuncName    string         `json:"funcName"`
	Status      string         `json:"status"`
	EndedAt     string         `json:"endedAt,omitempty"`
	Reads       []jsonDataset  `json:"reads"`
	Writes      []jsonDataset  `json:"writes"`
	Edges       []jsonEdge     `json:"edges"`
	Unknown     map[string]int `json:"unknownNodes,omitempty"`
}

type jsonDataset struct {
	Key       string   `json:"key"`
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	Kind      string   `json:"kind"`
	Location  string   `json:"location,omitempty"`
	Mode      string   `json:"mode,omitempty"`
	Columns   []string `json:"columns"`
}

type jsonEdge struct {
	Source  string `json:"source"`
	Target  string `json:"target"`
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Masking bool   `json:"masking"`
	Expr    string `json:"expr,omitempty"`
}

// writeJSON prints one JSON array with an object per event.
func writeJSON(w io.Writer, evs []Event) error {
	out := make([]jsonEvent, 0, len(evs))
	ds := func(d plan.Dataset, mode string) jsonDataset {
		j := jsonDataset{Key: d.Key, Namespace: d.Namespace, Name: d.Name, Kind: d.Kind, Location: d.Location, Mode: mode,
			Columns: make([]string, 0, len(d.Columns))}
		for _, c := range d.Columns {
			j.Columns = append(j.Columns, c.Name)
		}
		return j
	}
	for _, ev := range evs {
		env, lin := ev.Env, ev.Lineage
		j := jsonEvent{
			Source: ev.Source, EventID: env.EventID, Job: graph.JobKey(env.App), AppID: env.App.ID,
			ExecutionID: env.Query.ExecutionID, FuncName: env.Query.FuncName, Status: env.Query.Status,
			EndedAt: env.Query.EndedAt, Unknown: lin.Unknown,
			Reads: []jsonDataset{}, Writes: []jsonDataset{}, Edges: []jsonEdge{},
		}
		for _, d := range lin.Reads {
			j.Reads = append(j.Reads, ds(d, ""))
		}
		for _, d := range lin.Writes {
			j.Writes = append(j.Writes, ds(d.Dataset, d.Mode))
		}
		for _, e := range lin.Edges {
			j.Edges = append(j.Edges, jsonEdge{e.Source, e.Target, e.Type, e.Subtype, e.Masking, e.Expr})
		}
		out = append(out, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
