package graph

import "time"

// schema is run by Bootstrap, one statement per transaction. Uniqueness constraints exist in the
// Community Edition and give MERGE its index. There is deliberately no index on FEEDS.job: with
// one, the planner may answer the FEEDS MERGE by scanning every edge of the job instead of
// expanding between the two matched columns.
var schema = []string{
	`CREATE CONSTRAINT dataset_key IF NOT EXISTS FOR (n:Dataset) REQUIRE n.key IS UNIQUE`,
	`CREATE CONSTRAINT column_key IF NOT EXISTS FOR (n:Column) REQUIRE n.key IS UNIQUE`,
	`CREATE CONSTRAINT job_key IF NOT EXISTS FOR (n:Job) REQUIRE n.key IS UNIQUE`,
	`CREATE CONSTRAINT run_key IF NOT EXISTS FOR (n:Run) REQUIRE n.key IS UNIQUE`,
	`CREATE INDEX column_name IF NOT EXISTS FOR (n:Column) ON (n.name)`,
	// Text indexes answer CONTAINS (and STARTS WITH) on names: the explorer's search (Reader.Search).
	`CREATE TEXT INDEX column_name_text IF NOT EXISTS FOR (n:Column) ON (n.name)`,
	`CREATE TEXT INDEX dataset_name_text IF NOT EXISTS FOR (n:Dataset) ON (n.name)`,
	`CREATE TEXT INDEX job_name_text IF NOT EXISTS FOR (n:Job) ON (n.name)`,
	`CREATE CONSTRAINT graph_model_key IF NOT EXISTS FOR (n:GraphModel) REQUIRE n.key IS UNIQUE`,
	// Retention (retention.go) finds old runs and edges by these, without scanning the graph.
	`CREATE INDEX run_ended_at IF NOT EXISTS FOR (n:Run) ON (n.endedAt)`,
	`CREATE INDEX run_emitted_at IF NOT EXISTS FOR (n:Run) ON (n.emittedAt)`,
	`CREATE INDEX feeds_last_seen IF NOT EXISTS FOR ()-[f:FEEDS]-() ON (f.lastSeen)`,
	`CREATE INDEX decides_rows_last_seen IF NOT EXISTS FOR ()-[x:DECIDES_ROWS]-() ON (x.lastSeen)`,
	`CREATE INDEX lineage_last_seen IF NOT EXISTS FOR ()-[l:LINEAGE]-() ON (l.lastSeen)`,
	// Tags where they were set (tags.go): sets, rules by key, by column and by tag, settings.
	`CREATE CONSTRAINT tag_set_key IF NOT EXISTS FOR (n:TagSet) REQUIRE n.key IS UNIQUE`,
	`CREATE CONSTRAINT tag_rule_key IF NOT EXISTS FOR (n:TagRule) REQUIRE n.key IS UNIQUE`,
	`CREATE CONSTRAINT tag_key IF NOT EXISTS FOR (n:Tag) REQUIRE n.key IS UNIQUE`,
	`CREATE INDEX tag_rule_column IF NOT EXISTS FOR (n:TagRule) ON (n.columnKey)`,
	`CREATE INDEX tag_rule_tag IF NOT EXISTS FOR (n:TagRule) ON (n.tag)`,
	`CREATE INDEX tag_rule_set IF NOT EXISTS FOR (n:TagRule) ON (n.set)`,
	// The runs of a Spark application (Reader.Runs: colline lineage --app, GET /api/runs?app=).
	`CREATE INDEX run_app_id IF NOT EXISTS FOR (n:Run) ON (n.appId)`,
}

func zeroNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

func timeOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return *t
}

func boolOrNil(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

func stringOrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}
