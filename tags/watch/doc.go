// Package watch is the tags' policy after a run: the consumer counts, for every batch it writes,
// the tags that the batch's lineage carries unmasked into a dataset their settings do not allow
// (docs/tags.md), in colline_tags_policy_arrivals_total{tag}, which the chart's alert watches.
//
// Watcher decorates the loop's after-write step (ingest.Params.Emitter): it checks the batch,
// then hands it on to Next. A check that fails (Neo4j did not answer) is logged and counted, and
// never holds the lineage back: the batch goes on to Next and to its commit.
package watch
