// Package tags says where tagged data goes: column tags (pii, sensitivity, …) from the places
// users keep them, followed downstream along the lineage graph's DIRECT flows, stopped where a
// transformation masks the value (a hash, a count, a mask) and, per tag, where it aggregates.
//
// Tags are stored only where they were set (graph/tags.go keeps each source's rules and the
// tags' settings); everything downstream is computed here, at read time, from the graph as it
// is, one step of lineage at a time through the Graph seam, so that no copy goes stale when
// lineage changes or retention prunes it. Every answer carries its path, hop by hop.
//
//	tag.go        Tag, Rule, Policy, globs over dataset and column keys
//	file.go       the YAML tag file (docs/tags.md)
//	dbt.go        column tags and meta of a dbt project's manifest.json
//	cross.go      how a tag crosses one hop: carried, masked, aggregated or an indirect use
//	reach.go      Reach: everything a tag reaches, downstream of its sources
//	of.go         Of: a column's tags, upstream, each with its path
//	memory.go     a Graph in memory (one event's or one change's lineage)
//	policy.go     allowed destinations, violations
//	format.go     the answers as a table, CSV and JSON
//
// The package is pure: no I/O but what a caller hands it (readers, writers, the Graph).
package tags
