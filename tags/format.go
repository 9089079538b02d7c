package tags

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Formats of the answers.
var Formats = []string{"table", "csv", "json"}

// WriteReach writes a reach answer as a table (a summary, one line per reached column and
// source, the indirect uses), CSV (one row per reached column and source, with its path) or JSON.
func WriteReach(w io.Writer, format string, ans *ReachAnswer) error {
	switch format {
	case "json":
		return writeJSON(w, ans)
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"tag", "dataset", "column", "status", "allowed", "from", "tags", "hops", "path"})
		for _, c := range ans.Columns {
			for _, a := range c.Arrivals {
				cw.Write(safe(ans.Tag, c.Dataset, c.Column, string(a.Status), strconv.FormatBool(c.Allowed || a.Status != Unmasked),
					a.From, tagList(a.Tags), strconv.Itoa(len(a.Path)), PathString(a.Path)))
			}
		}
		cw.Flush()
		return cw.Error()
	case "table":
		un, agg, masked, datasets, uses := ans.Counts()
		fmt.Fprintf(w, "tag %s (%s)\n", ans.Tag, settings(ans.Policy))
		fmt.Fprintf(w, "sources: %d column(s)\n", len(ans.Sources))
		fmt.Fprintf(w, "reach: %d column(s) in %d dataset(s): %d unmasked (%d not allowed), %d aggregated, %d masked; %d indirect use(s)",
			len(ans.Columns), datasets, un, len(ans.Violations()), agg, masked, uses)
		if ans.Truncated {
			fmt.Fprint(w, "; TRUNCATED at the walk's bounds")
		}
		fmt.Fprintln(w)
		if len(ans.Columns) > 0 {
			fmt.Fprintln(w)
			tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "COLUMN\tSTATUS\tALLOWED\tFROM\tHOPS\tPATH")
			for _, c := range ans.Columns {
				for _, a := range c.Arrivals {
					allowed := "yes"
					if a.Status == Unmasked && !c.Allowed {
						allowed = "NO"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", c.Column, a.Status, allowed, a.From, len(a.Path), PathString(a.Path))
				}
			}
			tw.Flush()
		}
		if len(ans.Indirect) > 0 {
			fmt.Fprintln(w, "\nindirect uses (they tag nothing):")
			tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TARGET\tKIND\tVIA\tJOB\tROLES")
			for _, u := range ans.Indirect {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", u.Target, u.Kind, u.Via, u.Job, roleList(u.Roles))
			}
			tw.Flush()
		}
		return nil
	}
	return fmt.Errorf("unknown format %q: use one of %s", format, strings.Join(Formats, ", "))
}

// WriteColumns writes columns' tags as a table (per column, one line per tag with its path), CSV
// (one row per column and tag) or JSON.
func WriteColumns(w io.Writer, format string, cts []ColumnTags) error {
	switch format {
	case "json":
		return writeJSON(w, cts)
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"column", "tag", "value", "source", "status", "from", "hops", "path"})
		for _, ct := range cts {
			for _, c := range ct.Tags {
				cw.Write(safe(ct.Column, c.Tag.Key, c.Tag.Value, c.Tag.Source, string(c.Status), c.From, strconv.Itoa(len(c.Path)), PathString(c.Path)))
			}
		}
		cw.Flush()
		return cw.Error()
	case "table":
		for i, ct := range cts {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "%s: %d tag(s)", ct.Column, len(ct.Tags))
			if ct.Truncated {
				fmt.Fprint(w, " (TRUNCATED at the walk's bounds)")
			}
			fmt.Fprintln(w)
			for _, c := range ct.Tags {
				fmt.Fprintf(w, "  %s=%s %s, source %s", c.Tag.Key, c.Tag.Value, c.Status, c.Tag.Source)
				if len(c.Path) == 0 {
					fmt.Fprintln(w, ", on the column itself")
					continue
				}
				fmt.Fprintf(w, ", from %s in %d hop(s):\n", c.From, len(c.Path))
				for _, h := range c.Path {
					fmt.Fprintf(w, "    %s\n", h)
				}
			}
		}
		return nil
	}
	return fmt.Errorf("unknown format %q: use one of %s", format, strings.Join(Formats, ", "))
}

// PathString renders a path on one line: each hop's ends, job and roles, separated by " | ".
func PathString(path []Hop) string {
	parts := make([]string, len(path))
	for i, h := range path {
		parts[i] = h.String()
	}
	return strings.Join(parts, " | ")
}

func settings(p Policy) string {
	s := "aggregation " + p.Aggregation
	if len(p.Allowed) > 0 {
		allowed := make([]string, len(p.Allowed))
		for i, g := range p.Allowed {
			allowed[i] = string(g)
		}
		s += "; allowed in " + strings.Join(allowed, ", ")
	} else {
		s += "; allowed anywhere"
	}
	if p.Source != "" {
		s += "; settings from " + p.Source
	}
	return s
}

func tagList(ts []Tag) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
	}
	return strings.Join(parts, "; ")
}

func roleList(rs []Role) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// safe keeps a spreadsheet from reading a field as a formula (=, +, -, @ at the start: CSV
// injection): names come from Spark plans and may be anything.
func safe(fields ...string) []string {
	for i, s := range fields {
		if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
			fields[i] = "'" + s
		}
	}
	return fields
}
