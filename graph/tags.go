package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/record"
	"github.com/colline/colline/tags"
)

// Tags are stored where they were set, and only there (package tags computes where they go):
//
//	(:TagSet {key, source, dataset?, seenAt?, loadedAt})   one source's tags: a tag file, a dbt
//	                                                       manifest, or an event's tags of one dataset
//	(:TagRule {key, set, tag, value, source, dataset, column, columnKey?})
//	(:TagRule:TagPattern {…, datasetPrefix, datasetRegex, columnRegex})   a rule with wildcards
//	(:Tag {key, aggregation, allowed, description, source, set})          a tag's settings (a file's)
//
// A set is replaced whole: storing it deletes the rules and settings the graph held from it and
// creates the new ones. An event's set (TagSet.dataset) is replaced only by an event at least as
// new (seenAt), so a redelivered older event changes nothing. Rules name columns by key (an exact
// rule's columnKey, under an index) or by pattern (matched at read time), so that a column seen
// later is tagged as soon as it exists, and nothing tagged is copied anywhere.

// TagSet is one source's tags as of a time.
type TagSet struct {
	Key      string        // the set: its source ("file:tags/pii.yaml", "dbt:shop"); an event's set: its source, "|" and the dataset key
	Source   string        // tags.Source…
	Dataset  string        // an event's set: the dataset whose columns it tags
	Time     time.Time     // an event's set: the event's time; zero for a loaded set (always replaces)
	Rules    []tags.Rule   // the rules (an event's: one per column and tag)
	Policies []tags.Policy // a tag file's settings
}

// ErrTagSettings says that a tag's settings come from another set already: one file holds a
// tag's settings.
var ErrTagSettings = errors.New("tag settings")

// WriteTags stores sets in one write transaction (see the comment at the top of tags.go). A set
// whose tag settings another set holds fails with ErrTagSettings, and nothing is written.
func (w *Writer) WriteTags(ctx context.Context, sets []TagSet) error {
	if len(sets) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, w.timeout())
	defer cancel()
	_, err := w.executeWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		return nil, writeTagSets(ctx, tx, sets)
	}, neo4j.WithTxTimeout(w.timeout()))
	if err != nil {
		return fmt.Errorf("graph: tags of %d set(s): %w", len(sets), err)
	}
	return nil
}

// RemoveTags deletes the sets keys, with their rules and settings, in one transaction; it
// returns how many sets there were.
func (w *Writer) RemoveTags(ctx context.Context, keys []string) (int, error) {
	res, err := neo4j.ExecuteQuery(ctx, w.driver, `UNWIND $keys AS key
MATCH (s:TagSet {key: key})
CALL (s) { MATCH (r:TagRule {set: s.key}) DETACH DELETE r }
CALL (s) { MATCH (t:Tag {set: s.key}) DETACH DELETE t }
DETACH DELETE s
RETURN count(*) AS n`, map[string]any{"keys": keys}, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(w.database), neo4j.ExecuteQueryWithWritersRouting())
	if err != nil {
		return 0, fmt.Errorf("graph: remove tag sets: %w", err)
	}
	n, _ := get[int64](res.Records[0], "n")
	return int(n), nil
}

// writeTagSets writes sets in tx: the sets an older event would replace are left out.
func writeTagSets(ctx context.Context, tx neo4j.ManagedTransaction, sets []TagSet) error {
	if len(sets) == 0 {
		return nil
	}
	keys := make([]string, len(sets))
	for i, s := range sets {
		keys[i] = s.Key
	}
	cur, err := tx.Run(ctx, `UNWIND $keys AS key MATCH (s:TagSet {key: key}) RETURN s.key AS key, s.seenAt AS seenAt`, map[string]any{"keys": keys})
	if err != nil {
		return err
	}
	recs, err := cur.Collect(ctx)
	if err != nil {
		return err
	}
	stored := map[string]time.Time{}
	for _, rec := range recs {
		k, _ := get[string](rec, "key")
		t, _ := get[time.Time](rec, "seenAt")
		stored[k] = t
	}
	// newest per key wins within the batch too
	latest := map[string]int{}
	for i, s := range sets {
		if j, ok := latest[s.Key]; ok && sets[j].Time.After(s.Time) {
			continue
		}
		latest[s.Key] = i
	}
	var setRows, ruleRows, policyRows []map[string]any
	var policyKeys []string
	ruleKeys := map[string]bool{}
	for i, s := range sets {
		if latest[s.Key] != i {
			continue
		}
		t, known := stored[s.Key]
		if known && !s.Time.IsZero() && s.Time.Before(t) {
			continue // an older event's view of the dataset
		}
		if !known && !s.Time.IsZero() && len(s.Rules) == 0 {
			continue // an event's dataset without tags, and none before: nothing to store (most tables)
		}
		setRows = append(setRows, map[string]any{"key": s.Key, "source": s.Source, "dataset": stringOrNil(s.Dataset), "seenAt": zeroNil(s.Time)})
		for _, r := range s.Rules {
			row := ruleRow(s.Key, r)
			if !ruleKeys[row["key"].(string)] {
				ruleKeys[row["key"].(string)] = true
				ruleRows = append(ruleRows, row)
			}
		}
		for _, p := range s.Policies {
			allowed := make([]string, len(p.Allowed))
			for i, g := range p.Allowed {
				allowed[i] = string(g)
			}
			if slices.Contains(policyKeys, p.Key) {
				return fmt.Errorf("%w: tag %s is described twice (in %s and another set loaded with it); one file holds a tag's settings", ErrTagSettings, p.Key, s.Key)
			}
			policyRows = append(policyRows, map[string]any{"key": p.Key, "set": s.Key, "aggregation": p.Aggregation, "allowed": allowed,
				"description": p.Description, "source": p.Source})
			policyKeys = append(policyKeys, p.Key)
		}
	}
	if len(setRows) == 0 {
		return nil
	}
	setKeys := make([]string, len(setRows))
	for i, r := range setRows {
		setKeys[i] = r["key"].(string)
	}
	cur, err = tx.Run(ctx, `UNWIND $keys AS key MATCH (t:Tag {key: key}) WHERE NOT t.set IN $sets RETURN t.key AS key, t.set AS set`,
		map[string]any{"keys": policyKeys, "sets": setKeys})
	if err != nil {
		return err
	}
	if recs, err = cur.Collect(ctx); err != nil {
		return err
	}
	if len(recs) > 0 {
		var taken []string
		for _, rec := range recs {
			k, _ := get[string](rec, "key")
			s, _ := get[string](rec, "set")
			taken = append(taken, fmt.Sprintf("%s (from %s)", k, s))
		}
		return fmt.Errorf("%w: already loaded from another source: %s; one file holds a tag's settings (colline tags remove SOURCE to move them)", ErrTagSettings, strings.Join(taken, ", "))
	}
	for _, st := range []struct {
		q    string
		rows []map[string]any
	}{
		{`UNWIND $rows AS row
MERGE (s:TagSet {key: row.key})
SET s.source = row.source, s.dataset = row.dataset, s.seenAt = row.seenAt, s.loadedAt = datetime()
WITH s
CALL (s) { MATCH (r:TagRule {set: s.key}) DETACH DELETE r }
CALL (s) { MATCH (t:Tag {set: s.key}) DETACH DELETE t }
RETURN count(*) AS n`, setRows},
		{`UNWIND $rows AS row
CREATE (r:TagRule {key: row.key, set: row.set, tag: row.tag, value: row.value, source: row.source, dataset: row.dataset,
                   column: row.column, columnKey: row.columnKey, datasetPrefix: row.datasetPrefix, datasetRegex: row.datasetRegex,
                   columnRegex: row.columnRegex})
WITH r, row WHERE row.columnKey IS NULL
SET r:TagPattern
RETURN count(*) AS n`, ruleRows},
		{`UNWIND $rows AS row
CREATE (t:Tag {key: row.key, set: row.set, aggregation: row.aggregation, allowed: row.allowed, description: row.description, source: row.source})
RETURN count(*) AS n`, policyRows},
	} {
		for chunk := range slices.Chunk(st.rows, maxRows) {
			if _, err := tx.Run(ctx, st.q, map[string]any{"rows": chunk}); err != nil {
				return err
			}
		}
	}
	return nil
}

// ruleRow is a rule's node properties; key: the set, the column (or patterns) and the tag.
func ruleRow(set string, r tags.Rule) map[string]any {
	row := map[string]any{"set": set, "tag": r.Key, "value": r.Value, "source": r.Source, "dataset": string(r.Dataset),
		"column": string(r.Column), "columnKey": nil, "datasetPrefix": nil, "datasetRegex": nil, "columnRegex": nil}
	if k, ok := r.ColumnKey(); ok {
		row["columnKey"] = k
	} else {
		row["datasetPrefix"], row["datasetRegex"], row["columnRegex"] = r.Dataset.Prefix(), r.Dataset.Regexp(), r.Column.Regexp()
	}
	row["key"] = set + "|" + string(r.Dataset) + "#" + string(r.Column) + "|" + r.Key + "=" + r.Value
	return row
}

// EventTagSets are the tags items carry (plan.Lineage.Tags: a Spark catalog table's comments and
// properties, an OpenLineage TagsDatasetFacet), one set per item, source and dataset, as of the
// item's time; a tag that tags.Valid refuses is left out.
func EventTagSets(items []record.Item) []TagSet {
	var out []TagSet
	for _, it := range items {
		if it.Lineage == nil || len(it.Lineage.Tags) == 0 {
			continue
		}
		at, err := it.Time()
		if err != nil {
			continue // Check refused it already
		}
		for _, dt := range it.Lineage.Tags {
			s := TagSet{Key: dt.Source + "|" + dt.Dataset, Source: dt.Source, Dataset: dt.Dataset, Time: at}
			for _, ct := range dt.Tags {
				if tags.Valid(ct.Key, ct.Value) != nil {
					continue // a key no answer could name (an OpenLineage facet's key may be any text)
				}
				col := strings.TrimPrefix(ct.Column, dt.Dataset+"#")
				s.Rules = append(s.Rules, tags.Rule{Tag: tags.Tag{Key: ct.Key, Value: ct.Value, Source: ct.Source},
					Dataset: tags.Glob(dt.Dataset), Column: tags.Glob(col)})
			}
			out = append(out, s)
		}
	}
	return out
}
