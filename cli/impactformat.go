package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/colline/colline/impact"
	"github.com/colline/colline/tags"
)

func globList(gs []tags.Glob) string {
	parts := make([]string, len(gs))
	for i, g := range gs {
		parts[i] = string(g)
	}
	return strings.Join(parts, ", ")
}

// ImpactFormats are the output formats of impact.
var ImpactFormats = []string{"text", "json", "markdown"}

// WriteImpact renders an impact report in format (one of ImpactFormats). Names are shown with
// control and format characters escaped, as in explain.
func WriteImpact(w io.Writer, format string, r impact.Report) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case "markdown":
		return impactMarkdown(w, r)
	case "text":
		return impactText(w, r)
	}
	return fmt.Errorf("unknown format %q: use one of %s", format, strings.Join(ImpactFormats, ", "))
}

func verdict(r impact.Report) string {
	s := r.Summary
	switch {
	case r.Exit == impact.ExitTagPolicy:
		return fmt.Sprintf("TAG POLICY: the change carries tags unmasked into %d column(s) where their settings do not allow them", s.TagArrivals)
	case r.Exit == impact.ExitBreaking:
		return fmt.Sprintf("BREAKING: %d change(s) break columns that something downstream reads", s.Breaking)
	case r.Exit == impact.ExitAlters:
		return fmt.Sprintf("ALTERS: %d change(s) alter what something downstream reads", s.Altering)
	case s.Changes == 0:
		return "no lineage change"
	case s.Breaking+s.Altering == 0:
		return "nothing downstream is affected"
	case s.Breaking > 0:
		return fmt.Sprintf("%d breaking change(s) reach downstream (not failing: --fail-on %s)", s.Breaking, r.FailOn)
	}
	return fmt.Sprintf("no breaking change; %d change(s) alter what something downstream reads", s.Altering)
}

// changeLabel is a change in words: "column removed spark_catalog/db.t#c (int)".
func changeLabel(c impact.Reached) string {
	switch c.Kind {
	case impact.DatasetAdded:
		return "newly written " + visible(c.Dataset)
	case impact.DatasetRemoved:
		return "no longer written " + visible(c.Dataset)
	case impact.ColumnAdded:
		return fmt.Sprintf("column added %s (%s)", visible(c.Column), visible(c.NewType))
	case impact.ColumnRemoved:
		return fmt.Sprintf("column removed %s (%s)", visible(c.Column), visible(c.OldType))
	case impact.ColumnRetyped:
		return fmt.Sprintf("column retyped %s: %s -> %s", visible(c.Column), visible(c.OldType), visible(c.NewType))
	case impact.EdgeAdded, impact.EdgeRemoved, impact.EdgeChanged:
		return fmt.Sprintf("%s %s -> %s", strings.ReplaceAll(c.Kind, "_", " "), visible(c.Source), visible(c.Column))
	}
	return fmt.Sprintf("%s %s => %s", strings.ReplaceAll(c.Kind, "_", " "), visible(c.Source), visible(c.Dataset))
}

func changeStatus(c impact.Reached) string {
	switch {
	case len(c.Downstream) == 0:
		return "no impact"
	case c.Breaking:
		return "BREAKS"
	}
	return "alters"
}

func roleText(rs []impact.Role) string {
	if len(rs) == 0 {
		return "-"
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		s := r.Role
		if r.Masking {
			s += " masked"
		}
		if r.Expr != "" && !strings.HasSuffix(r.Role, "/IDENTITY") {
			s += " " + fmt.Sprintf("%q", visible(r.Expr))
		}
		parts[i] = s
	}
	return strings.Join(parts, ", ")
}

func rolesCell(c impact.Reached, sep string) string {
	if c.Kind == impact.EdgeChanged || c.Kind == impact.RowsChanged {
		return "before: " + roleText(c.Before) + sep + "after:  " + roleText(c.After)
	}
	if len(c.Before)+len(c.After) == 0 {
		return ""
	}
	return roleText(append(append([]impact.Role(nil), c.Before...), c.After...))
}

func jobLabel(r impact.Report) string {
	if r.Job == "" {
		return "every job writing them"
	}
	return visible(r.Job)
}

func impactText(w io.Writer, r impact.Report) error {
	fmt.Fprintf(w, "colline impact: %s vs %s (job %s, depth %d)\n", visible(strings.Join(r.New, " ")), visible(r.Old), jobLabel(r), r.Depth)
	for _, c := range r.Changes {
		fmt.Fprintf(w, "%-9s %s\n", changeStatus(c), changeLabel(c))
		if roles := rolesCell(c, "\n          "); roles != "" {
			fmt.Fprintf(w, "          %s\n", roles)
		}
		for _, d := range c.Downstream {
			jobs := make([]string, len(d.Jobs))
			for i, j := range d.Jobs {
				jobs[i] = visible(j)
			}
			fmt.Fprintf(w, "          %d hop(s)  %s  via %s\n", d.Hops, visible(d.Column), strings.Join(jobs, " > "))
		}
	}
	for _, a := range r.TagArrivals {
		fmt.Fprintf(w, "TAG       %s arrives unmasked in %s, allowed only in %s\n          %s\n", visible(a.Tag), visible(a.Column),
			visible(globList(a.Allowed)), visible(tags.PathString(a.Path)))
	}
	s := r.Summary
	fmt.Fprintf(w, "%d change(s); downstream: %d column(s) in %d dataset(s); jobs reading them: %s\n", s.Changes,
		s.DownstreamColumns, len(s.DownstreamDatasets), visibleList(s.DownstreamJobs))
	fmt.Fprintf(w, "%s (exit %d)\n", verdict(r), r.Exit)
	return nil
}

func impactMarkdown(w io.Writer, r impact.Report) error {
	icon := map[int]string{impact.ExitOK: "✅", impact.ExitBreaking: "❌", impact.ExitAlters: "⚠️", impact.ExitTagPolicy: "⛔"}[r.Exit]
	fmt.Fprintf(w, "### %s colline impact: %s\n\n", icon, md(verdict(r)))
	fmt.Fprintf(w, "%s compared with %s (job %s, depth %d).\n\n", code(strings.Join(r.New, " ")), md(visible(r.Old)), code(r.Job), r.Depth)
	if len(r.TagArrivals) > 0 {
		fmt.Fprintln(w, "| tag | arrives unmasked in | allowed only in | path |")
		fmt.Fprintln(w, "|---|---|---|---|")
		for _, a := range r.TagArrivals {
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", code(a.Tag), code(a.Column), md(visible(globList(a.Allowed))), md(visible(tags.PathString(a.Path))))
		}
		fmt.Fprintln(w)
	}
	if len(r.Changes) == 0 {
		fmt.Fprintln(w, "No lineage change.")
		return nil
	}
	fmt.Fprintln(w, "| | change | roles | downstream |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, c := range r.Changes {
		down := "-"
		if len(c.Downstream) > 0 {
			down = fmt.Sprintf("%d column(s) in %s; read by %s", len(c.Downstream), codes(c.Datasets), codes(c.Jobs))
		}
		roles := rolesCell(c, "<br>")
		if roles == "" {
			roles = "-"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", changeStatus(c), md(changeLabel(c)), md(roles), down)
	}
	s := r.Summary
	fmt.Fprintf(w, "\n%d change(s): %d breaking and %d altering something downstream; %d downstream column(s) in %s.\n",
		s.Changes, s.Breaking, s.Altering, s.DownstreamColumns, codes(s.DownstreamDatasets))
	return nil
}

func visibleList(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = visible(x)
	}
	return strings.Join(out, ", ")
}

func codes(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = code(x)
	}
	return strings.Join(out, ", ")
}

// code is a Markdown code span of s (every job, dataset and column key is shown as one).
func code(s string) string {
	if s == "" {
		return "(every job)"
	}
	return "`" + md(strings.ReplaceAll(visible(s), "`", "'")) + "`"
}

// md keeps a table cell on one line and its pipes out of the table structure.
func md(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ", "\r", " ").Replace(s)
}
