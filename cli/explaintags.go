package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
	"github.com/colline/colline/tags"
)

// readTagFiles reads tag files (docs/tags.md) into their rules and settings.
func readTagFiles(files []string) ([]tags.Rule, []tags.Policy, error) {
	var rules []tags.Rule
	var policies []tags.Policy
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, err
		}
		tf, err := tags.ReadFile(name, f)
		f.Close()
		if err != nil {
			return nil, nil, err
		}
		rules, policies = append(rules, tf.Rules...), append(policies, tf.Policies...)
	}
	return rules, policies, nil
}

// eventRules are the rules of the tags an event carries itself (Spark catalog comments and
// properties, an OpenLineage TagsDatasetFacet).
func eventRules(lin *plan.Lineage) []tags.Rule {
	var out []tags.Rule
	for _, dt := range lin.Tags {
		for _, ct := range dt.Tags {
			col := ct.Column[min(len(ct.Column), len(dt.Dataset)+1):]
			out = append(out, tags.Rule{Tag: tags.Tag{Key: ct.Key, Value: ct.Value, Source: ct.Source}, Dataset: tags.Glob(dt.Dataset), Column: tags.Glob(col)})
		}
	}
	return out
}

// writeEventTags prints, per event, the tags its source columns carry and where they reach its
// writes: tags from the files' rules and the event's own tags, and those the sources carry from
// upstream, as the graph g says, or (g nil) as the events explained together say (a run's
// events in order: the first writes what the next reads). Settings come from g, else the files.
func writeEventTags(ctx context.Context, w io.Writer, evs []Event, rules []tags.Rule, policies []tags.Policy, g tags.Graph) error {
	if g == nil {
		all := rules
		for _, ev := range evs {
			all = append(all, eventRules(ev.Lineage)...)
		}
		run := tags.NewMemory(all, policies)
		for _, ev := range evs {
			run.AddLineage(ev.Lineage, record.JobKey(ev.Env.App))
		}
		g = run
	}
	fmt.Fprintln(w, "\n# tags: of each event's sources, and where they reach its writes (DIRECT flows; a mask stops them)")
	for _, ev := range evs {
		m := tags.NewMemory(append(eventRules(ev.Lineage), rules...), nil)
		m.AddLineage(ev.Lineage, record.JobKey(ev.Env.App))
		answers, err := tags.Carry(ctx, g, m, tags.Limits{})
		if err != nil {
			return fmt.Errorf("%s: tags: %w", ev.Source, err)
		}
		fmt.Fprintf(w, "%s:", visible(ev.Source))
		if len(answers) == 0 {
			fmt.Fprintln(w, " no source column carries a tag")
			continue
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  COLUMN\tTAG\tSTATUS\tALLOWED\tFROM\tHOPS")
		for _, ans := range answers {
			for _, c := range ans.Columns {
				for _, a := range c.Arrivals {
					allowed := "yes"
					if a.Status == tags.Unmasked && !c.Allowed {
						allowed = "NO"
					}
					from := a.From
					if len(a.Path) > 0 {
						from = a.Path[0].From
					}
					for _, t := range a.Tags {
						fmt.Fprintf(tw, "  %s\t%s=%s (%s)\t%s\t%s\t%s\t%d\n", visible(c.Column), visible(t.Key), visible(t.Value), visible(t.Source),
							a.Status, allowed, visible(from), len(a.Path))
					}
				}
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
