package graph

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/colline/colline/plan"
)

// Schema: a dataset's columns as a version, as a job's lineage is one (version.go; docs/graph-
// model.md, "Re-runs confirm their schema"). schema is the fingerprint of the newest listing of
// the dataset's columns (each column's key, name, type and parent, in order, and the dataset's
// name), schemaSince the earliest time of a listing of it since it became current, schemaSeen the
// newest. The columns of that listing (Column.schema = Dataset.schema) are its current columns:
// their lastSeen is schemaSeen when that is newer than their own (ColumnLastSeen).
//
//	(:Dataset {..., schema, schemaSince, schemaSeen})
//	(:Column {..., schema})
//
// A batch whose every listing of a dataset has the stored fingerprint, none older than
// schemaSince, confirms it: it moves schemaSeen and writes none of the dataset's columns (a run
// reads and writes the same tables each time, so this is what makes a re-run O(1) in columns).
// Otherwise the columns are written as before, after the current columns got schemaSeen as their
// own lastSeen (schemaSupersede), so the rules of columnProperties compare with exact times; the
// newest listing then becomes current. No listing was confirmed before model 4, so a model-3
// graph is a model-4 graph whose datasets have no schema yet.

// schemaFormat names the encoding below; a change of it changes every fingerprint (each
// dataset's next listing then writes its columns once).
const schemaFormat = "colline-schema-1"

// schemaFingerprint is the hex SHA-256 of a listing of d's columns: everything the column
// statements write of them but their times.
func schemaFingerprint(d *plan.Dataset) string {
	var buf encoding
	buf.str(schemaFormat)
	buf.str(d.Name)
	buf.count(len(d.Columns))
	for _, c := range d.Columns {
		buf.str(c.Key)
		buf.str(c.Name)
		buf.str(c.Type)
		buf.str(c.Parent)
	}
	h := sha256.Sum256(buf)
	return hex.EncodeToString(h[:])
}

// listing is one listing of a dataset's columns in a batch.
type listing struct {
	fingerprint string
	at          time.Time
	columns     []string // keys, fields included
}

// schemaState is a dataset's schema as stored, read in the write transaction (existing.go).
type schemaState struct {
	fingerprint string // "": none
	since, seen time.Time
}

// schemaUpdate is a dataset's schema as the batch leaves it.
type schemaUpdate struct {
	dataset, fingerprint string
	since, seen          time.Time
}

// supersedeSchemaRow gives the current columns of a dataset (Column.schema = fingerprint) its
// stored schemaSeen as their own lastSeen, before the batch writes its columns.
type supersedeSchemaRow struct {
	dataset, fingerprint string
	seen                 time.Time
}

// decideSchemas decides, per dataset of the batch that listed its columns, whether the batch
// confirms its stored schema (no column written) or writes the columns, and what the schema
// becomes. It sets r's confirmed, current, supersedeSchema and schemas, and may run again (a
// retried transaction) with other states; nil states: an empty graph.
func (r *rows) decideSchemas(states map[string]schemaState) {
	r.confirmed, r.current = map[string]bool{}, map[string]string{}
	r.supersedeSchema, r.schemas = nil, nil
	for _, d := range r.datasets {
		if len(d.listings) == 0 {
			continue
		}
		st := states[d.key]
		n, first, same := d.listings[0], d.listings[0].at, st.fingerprint != "" && !d.partial
		for _, l := range d.listings {
			if !l.at.Before(n.at) { // ties: the later item wins
				n = l
			}
			first = minTime(first, l.at)
			same = same && l.fingerprint == st.fingerprint
		}
		if same && !first.Before(st.since) {
			r.confirmed[d.key] = true
			if n.at.After(st.seen) {
				r.schemas = append(r.schemas, schemaUpdate{dataset: d.key, fingerprint: st.fingerprint, since: st.since, seen: n.at})
			}
			continue
		}
		if st.fingerprint != "" {
			r.supersedeSchema = append(r.supersedeSchema, supersedeSchemaRow{dataset: d.key, fingerprint: st.fingerprint, seen: st.seen})
		}
		u := schemaUpdate{dataset: d.key, fingerprint: st.fingerprint, since: st.since, seen: st.seen}
		if st.fingerprint == "" || !n.at.Before(st.seen) { // the batch's newest listing is the newest
			u.fingerprint, u.seen = n.fingerprint, n.at
			if n.fingerprint != st.fingerprint {
				u.since = n.at
			}
			for _, c := range n.columns {
				r.current[c] = n.fingerprint
			}
		}
		for _, l := range d.listings {
			if l.fingerprint == u.fingerprint {
				u.since = minTime(u.since, l.at)
			}
		}
		if u != (schemaUpdate{dataset: d.key, fingerprint: st.fingerprint, since: st.since, seen: st.seen}) {
			r.schemas = append(r.schemas, u)
		}
	}
}

// version is the schema fingerprint column key becomes a current column of, or nil.
func (r *rows) version(key string) any {
	if fp, ok := r.current[key]; ok {
		return fp
	}
	return nil
}

// writesColumns reports whether the batch writes the columns of dataset (not a confirmation).
func (r *rows) writesColumns(dataset string) bool { return !r.confirmed[dataset] }

// schemaSupersede gives each row's current columns (its struct fields included) the stored
// schemaSeen as their own lastSeen, when it is newer: the columns then carry exact times for the
// statements after it. The test is inside the SET (no Eager: supersedeSet says why).
var schemaSupersede = element{
	name: "schema supersede",
	query: `UNWIND $rows AS row
MATCH (d:Dataset {key: row.dataset})
CALL (row, d) {
  MATCH (d)-[:HAS_COLUMN]->(:Column)-[:HAS_FIELD*0..]->(c:Column)
  WHERE c.schema = row.fingerprint
  SET c.lastSeen = CASE WHEN c.lastSeen IS NULL OR c.lastSeen < row.seen THEN row.seen ELSE c.lastSeen END
  RETURN count(*) AS columns
}
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(r.supersedeSchema, func(x supersedeSchemaRow) map[string]any {
			return map[string]any{"dataset": x.dataset, "fingerprint": x.fingerprint, "seen": x.seen}
		})
	},
}

// schemas writes each dataset's schema as decideSchemas left it.
var schemas = element{
	name: "schemas",
	query: `UNWIND $rows AS row
MATCH (d:Dataset {key: row.dataset})
SET d.schema = row.fingerprint, d.schemaSince = row.since, d.schemaSeen = row.seen
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any {
		return params(r.schemas, func(x schemaUpdate) map[string]any {
			return map[string]any{"dataset": x.dataset, "fingerprint": x.fingerprint, "since": x.since, "seen": x.seen}
		})
	},
}

// ColumnLastSeen is the Cypher of column c's lastSeen, given its dataset d: its dataset's
// schemaSeen while it is a current column and that is newer, else its own.
func ColumnLastSeen(c, d string) string {
	return "CASE WHEN " + d + ".schema IS NOT NULL AND " + c + ".schema = " + d + ".schema AND (" + c + ".lastSeen IS NULL OR " +
		c + ".lastSeen < " + d + ".schemaSeen) THEN " + d + ".schemaSeen ELSE " + c + ".lastSeen END"
}

// columnLastSeen is ColumnLastSeen on properties read: column c of dataset d.
func columnLastSeen(c, d map[string]any) *time.Time {
	own := timeProp(c, "lastSeen")
	fp, _ := d["schema"].(string)
	if cfp, _ := c["schema"].(string); fp == "" || cfp != fp {
		return own
	}
	if seen := timeProp(d, "schemaSeen"); seen != nil && (own == nil || own.Before(*seen)) {
		return seen
	}
	return own
}
