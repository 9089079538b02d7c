// Package impact tells what a change to a job's SQL does: the lineage diff between the job's
// lineage before and after (edges and roles added, removed, changed; target columns added,
// removed, retyped; datasets no longer written) and, with what lies downstream of each changed
// column in the live graph, whether the change breaks something that reads it. It is pure: the
// lineage comes from plan (analyzed SQL) or graph.Reader.Written (the graph), the downstream
// columns from graph.Reader.Reach, and Report renders text, JSON and Markdown.
package impact
