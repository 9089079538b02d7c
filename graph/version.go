package graph

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/colline/colline/plan"
)

// LINEAGE: a job's current lineage into a dataset, as a version (docs/graph-model.md, "Re-runs
// confirm their lineage"). fingerprint identifies the FEEDS into the dataset's columns and the
// DECIDES_ROWS into the dataset that the job's newest run showed; those are its current edges,
// which carry no lastSeen and no lastRun of their own: theirs are the LINEAGE's. A run with the
// same fingerprint only confirms the LINEAGE; a run with another one supersedes the current
// edges (they get the LINEAGE's lastSeen, lastRun and stale) and writes its own.
//
//	(:Job)-[:LINEAGE {fingerprint, since, firstSeen, lastSeen, lastRun, stale?}]->(:Dataset)
//
// since is the earliest time of a run of the version since it became current: every current
// edge has a firstSeen at or before it, so a run of the same version at or after it cannot move
// any firstSeen back, and confirms without writing edges.
//
// The writer reads the LINEAGEs of a batch (lineageState) after it wrote the batch's jobs and
// datasets in the same transaction: those SETs hold the nodes' write locks until the commit, and
// every transaction that changes a LINEAGE (the writer's, retention's) locks its dataset first,
// so what the writer read stays true until it commits. It then decides per LINEAGE (decide) and
// writes the superseding, the edges and the LINEAGEs.

// Relationship type of a job's lineage version.
const Lineage = "LINEAGE"

// observation is what one item showed of its job's lineage into one dataset.
type observation struct {
	fingerprint    string
	at             time.Time
	run            string
	feeds, decides []plan.Edge // into the dataset's columns, into the dataset
}

// versionRow is one (job, dataset) of a batch with the observations of its items, in item order.
type versionRow struct {
	job, dataset string
	obs          []observation
}

func (a *versionRow) compare(b *versionRow) int {
	return cmp.Or(cmp.Compare(a.job, b.job), cmp.Compare(a.dataset, b.dataset))
}

// versionState is a LINEAGE as stored, read in the write transaction; exists is false when there
// is none yet.
type versionState struct {
	exists                     bool
	id                         string // the LINEAGE's element id, as this transaction read it
	fingerprint, lastRun       string
	since, firstSeen, lastSeen time.Time
	stale                      bool
	// orphans: no LINEAGE, but edges of the job into the dataset exist (a model-2 graph's, or a
	// retention pass stopped between two steps); false when the LINEAGE exists.
	orphans bool
}

// versions splits an item's lineage by the dataset each edge ends in (a column edge's target
// column's dataset, a row-level dependency's dataset) and adds one observation per dataset to
// the batch, every written dataset included (a write with no column edges is a version with no
// edges). A table-level item (plan.Lineage.TableLevel: degraded, or over an extraction budget)
// observes nothing: its column lineage is missing, not empty, so it neither confirms the current
// version nor supersedes it with a version of no edges (which a write with no column lineage is).
func (b *batch) versions(lin *plan.Lineage, job, run string, at time.Time) {
	if lin.TableLevel() {
		return
	}
	datasetOf := map[string]string{}
	for _, ds := range [][]plan.Dataset{lin.Reads, writtenDatasets(lin.Writes)} {
		for _, d := range ds {
			for _, c := range d.Columns {
				datasetOf[c.Key] = d.Key
			}
		}
	}
	by := map[string]*observation{}
	get := func(dataset string) *observation {
		o := by[dataset]
		if o == nil {
			o = &observation{at: at, run: run}
			by[dataset] = o
		}
		return o
	}
	for _, w := range lin.Writes {
		get(w.Key)
	}
	for _, e := range lin.Edges {
		o := get(datasetOf[e.Target]) // record.Check: every target is a column of a listed dataset
		o.feeds = append(o.feeds, e)
	}
	for _, e := range lin.RowDeps {
		o := get(e.Target)
		o.decides = append(o.decides, e)
	}
	for dataset, o := range by {
		o.fingerprint = fingerprint(o.feeds, o.decides)
		v := b.lineages.get([2]string{job, dataset}, func() *versionRow { return &versionRow{job: job, dataset: dataset} })
		v.obs = append(v.obs, *o)
	}
}

func writtenDatasets(ws []plan.Write) []plan.Dataset {
	out := make([]plan.Dataset, len(ws))
	for i, w := range ws {
		out[i] = w.Dataset
	}
	return out
}

// fingerprintFormat names the encoding below; a change of it changes every fingerprint (each
// job's next run then writes its edges once).
const fingerprintFormat = "colline-lineage-2"

// encoding is an unambiguous byte encoding for fingerprints: every string and list is prefixed
// with its length, so no two sequences of values encode alike.
type encoding []byte

func (b *encoding) str(s string) { *b = append(binary.AppendUvarint(*b, uint64(len(s))), s...) }
func (b *encoding) count(n int)  { *b = binary.AppendUvarint(*b, uint64(n)) }

// fingerprint is the hex SHA-256 of a version: its column edges and row-level dependencies, each
// with its source, target and every role (type, subtype, expression, masking, the rows it
// decides) in order; no run, no time. Every string is length-prefixed, so no two versions
// encode alike. Format 2 added the rows (DECIDES_ROWS per UNION branch).
func fingerprint(feeds, decides []plan.Edge) string {
	h := sha256.New()
	var buf encoding
	str := buf.str
	str(fingerprintFormat)
	for _, list := range [2][]plan.Edge{feeds, decides} {
		list = slices.SortedFunc(slices.Values(list), func(a, b plan.Edge) int {
			return cmp.Or(cmp.Compare(a.Target, b.Target), cmp.Compare(a.Source, b.Source))
		})
		buf.count(len(list))
		for _, e := range list {
			str(e.Source)
			str(e.Target)
			buf.count(len(e.Transformations))
			for _, t := range e.Transformations {
				str(t.Type)
				str(t.Subtype)
				str(t.Expr)
				str(t.Rows)
				if t.Masking {
					buf = append(buf, 1)
				} else {
					buf = append(buf, 0)
				}
			}
			if len(buf) > 32<<10 {
				h.Write(buf)
				buf = buf[:0]
			}
		}
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}

// supersedeRow makes the current edges of a job's lineage into a dataset superseded: they get
// the LINEAGE's lastSeen, lastRun and stale, before a run with another fingerprint replaces it.
type supersedeRow struct {
	job, dataset, lastRun string
	lastSeen              time.Time
	stale                 bool
}

// lineageUpdate is a LINEAGE as the batch leaves it (decide computed every value).
type lineageUpdate struct {
	id                                 string // the stored LINEAGE's element id; "": the batch creates it
	job, dataset, fingerprint, lastRun string
	since, firstSeen, lastSeen         time.Time
	stale                              bool
}

func (a *supersedeRow) compare(b *supersedeRow) int {
	return cmp.Or(cmp.Compare(a.job, b.job), cmp.Compare(a.dataset, b.dataset))
}

// decide turns the batch's versions into what to write, given the LINEAGEs as stored (none:
// an empty graph): for each (job, dataset), a confirmation alone when every observation has the
// stored fingerprint and none is older than its since; else the observations' edges (merged,
// newest wins, as before), the superseding of the stored version when the batch's newest
// observation replaces it with another fingerprint, and the LINEAGE. It sets r's feeds, decides,
// supersede and lineages, and may run again (a retried transaction) with other states.
func (r *rows) decide(states map[[2]string]versionState) {
	feeds, decides := set[[3]string, lineageRow]{}, set[[3]string, lineageRow]{}
	r.supersede, r.lineages = nil, nil
	for _, v := range r.versions {
		st := states[[2]string{v.job, v.dataset}]
		n := v.obs[0]
		first := n.at
		same := st.exists && st.fingerprint != ""
		for _, o := range v.obs {
			if !o.at.Before(n.at) { // ties: the later item wins
				n = o
			}
			first = minTime(first, o.at)
			same = same && o.fingerprint == st.fingerprint
		}
		u := lineageUpdate{id: st.id, job: v.job, dataset: v.dataset, fingerprint: st.fingerprint, lastRun: st.lastRun,
			since: st.since, firstSeen: first, lastSeen: st.lastSeen, stale: st.stale}
		if st.exists {
			u.firstSeen = minTime(st.firstSeen, first)
		}
		newer := !st.exists || !n.at.Before(st.lastSeen) // the batch's newest run is the job's newest
		if newer {
			u.lastSeen, u.lastRun = n.at, n.run
			u.stale = st.stale && n.at.Equal(st.lastSeen) // a newer run clears it; the same one leaves it
		}
		if same && !first.Before(st.since) {
			// A confirmation: the stored version's edges are the runs' edges.
			if u != (lineageUpdate{id: st.id, job: v.job, dataset: v.dataset, fingerprint: st.fingerprint, lastRun: st.lastRun,
				since: st.since, firstSeen: st.firstSeen, lastSeen: st.lastSeen, stale: st.stale}) {
				r.lineages = append(r.lineages, u)
			}
			continue
		}
		var slotSeen time.Time // the current edges' lastSeen, for the newest-wins test of the rows
		if st.exists {
			slotSeen = st.lastSeen
		}
		var rows []*lineageRow
		for _, o := range v.obs {
			for _, e := range o.feeds {
				rows = append(rows, mergeEdge(feeds, e, v.job, o.run, o.at))
			}
			for _, e := range o.decides {
				rows = append(rows, mergeEdge(decides, e, v.job, o.run, o.at))
			}
		}
		for _, x := range rows {
			x.slotSeen = slotSeen
			x.fresh = !st.exists && !st.orphans // nothing to merge with: created
		}
		if newer {
			// The newest run's version becomes current: its edges drop their own lastSeen.
			for _, list := range [2]struct {
				rows  set[[3]string, lineageRow]
				edges []plan.Edge
			}{{feeds, n.feeds}, {decides, n.decides}} {
				for _, e := range list.edges {
					list.rows[[3]string{e.Source, e.Target, v.job}].current = true
				}
			}
			if st.exists && st.fingerprint != n.fingerprint {
				r.supersede = append(r.supersede, supersedeRow{job: v.job, dataset: v.dataset, lastRun: st.lastRun, lastSeen: st.lastSeen, stale: st.stale})
			}
			u.fingerprint, u.since = n.fingerprint, n.at
			if st.exists && st.fingerprint == n.fingerprint {
				u.since = minTime(u.since, st.since)
			}
		}
		for _, o := range v.obs {
			if o.fingerprint == u.fingerprint && u.fingerprint != "" {
				u.since = minTime(u.since, o.at)
			}
		}
		r.lineages = append(r.lineages, u)
	}
	r.feeds = feeds.sorted((*lineageRow).compare)
	r.decides = decides.sorted((*lineageRow).compare)
}

func minTime(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

// lineageState reads the stored LINEAGE of each (job, dataset) of the batch: its rows are the
// versions, and it returns one record per row (i: the row's index), with nulls where there is
// none, and whether edges of the job into the dataset exist without a LINEAGE. It writes
// nothing; see the comment at the top about the locks that keep what it read.
var lineageState = element{
	name:  "lineage state",
	query: lineageStateQuery,
	rows:  lineageStateRows,
	read:  readStates,
}

const lineageStateQuery = `UNWIND $rows AS row
MATCH (j:Job {key: row.job})
MATCH (d:Dataset {key: row.dataset})
OPTIONAL MATCH (j)-[l:LINEAGE]->(d)
RETURN row.i AS i, l IS NOT NULL AS exists, elementId(l) AS id, l.fingerprint AS fingerprint, l.since AS since, l.firstSeen AS firstSeen,
       l.lastSeen AS lastSeen, l.lastRun AS lastRun, l.stale AS stale,
       CASE WHEN l IS NULL THEN EXISTS { MATCH (d)<-[:DECIDES_ROWS {job: row.job}]-(:Column) }
         OR EXISTS { MATCH (d)-[:HAS_COLUMN]->(:Column)-[:HAS_FIELD*0..]->(:Column)<-[:FEEDS {job: row.job}]-(:Column) }
         ELSE false END AS orphans`

func lineageStateRows(r *rows) []map[string]any {
	out := make([]map[string]any, len(r.versions))
	for i, v := range r.versions {
		out[i] = map[string]any{"i": int64(i), "job": v.job, "dataset": v.dataset}
	}
	return out
}

// readStates runs lineageState in tx and decides r's lineage rows from what it read.
func readStates(ctx context.Context, tx runner, r *rows, prefix string, observe observer) error {
	states := make(map[[2]string]versionState, len(r.versions))
	const name = "lineage state"
	for chunk := range slices.Chunk(lineageStateRows(r), maxRows) {
		recs, err := collect(ctx, tx, name, prefix+keepPlan+lineageStateQuery, map[string]any{"rows": chunk}, len(chunk), observe)
		if err != nil {
			return err
		}
		if len(recs) != len(chunk) {
			return fmt.Errorf("%w: statement %s returned %d of %d rows", errRowCount, name, len(recs), len(chunk))
		}
		for _, rec := range recs {
			i, _ := get[int64](rec, "i")
			if i < 0 || int(i) >= len(r.versions) {
				return fmt.Errorf("%w: statement %s returned row %d of %d", errRowCount, name, i, len(r.versions))
			}
			v := r.versions[i]
			st := versionState{}
			st.exists, _ = get[bool](rec, "exists")
			st.id, _ = get[string](rec, "id")
			st.fingerprint, _ = get[string](rec, "fingerprint")
			st.lastRun, _ = get[string](rec, "lastRun")
			st.stale, _ = get[bool](rec, "stale")
			st.orphans, _ = get[bool](rec, "orphans")
			for k, t := range map[string]*time.Time{"since": &st.since, "firstSeen": &st.firstSeen, "lastSeen": &st.lastSeen} {
				if x, ok := get[time.Time](rec, k); ok {
					*t = x.UTC()
				}
			}
			states[[2]string{v.job, v.dataset}] = st
		}
	}
	r.decide(states)
	return nil
}

// supersedeFeeds and supersedeDecides give the current edges of each row's (job, dataset) the
// LINEAGE's lastSeen, lastRun and stale (the values the writer read): the FEEDS into the
// dataset's columns (and their struct fields), the DECIDES_ROWS into the dataset.
var supersedeFeeds = element{
	name: "supersede feeds",
	query: `UNWIND $rows AS row
MATCH (d:Dataset {key: row.dataset})
CALL (row, d) {
  MATCH (d)-[:HAS_COLUMN]->(:Column)-[:HAS_FIELD*0..]->(:Column)<-[f:FEEDS {job: row.job}]-(:Column)
  ` + supersedeSet("f") + `
  RETURN count(*) AS edges
}
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any { return params(r.supersede, supersedeParams) },
}

var supersedeDecides = element{
	name: "supersede decides",
	query: `UNWIND $rows AS row
MATCH (d:Dataset {key: row.dataset})
CALL (row, d) {
  MATCH (d)<-[x:DECIDES_ROWS {job: row.job}]-(:Column)
  ` + supersedeSet("x") + `
  RETURN count(*) AS edges
}
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any { return params(r.supersede, supersedeParams) },
}

// supersedeSet gives edge x the row's values when it is current (no lastSeen of its own). The
// test is inside the SET, not in a WHERE before it: a read of lastSeen before the SET that writes
// it plans an Eager (TestNoEagerTPCDS); the SET evaluates every item before it assigns any.
func supersedeSet(x string) string {
	return "SET " + x + ".stale = CASE WHEN " + x + ".lastSeen IS NULL AND row.stale THEN true ELSE " + x + ".stale END,\n" +
		"      " + x + ".lastRun = CASE WHEN " + x + ".lastSeen IS NULL THEN row.lastRun ELSE " + x + ".lastRun END,\n" +
		"      " + x + ".lastSeen = coalesce(" + x + ".lastSeen, row.lastSeen)"
}

func supersedeParams(x supersedeRow) map[string]any {
	return map[string]any{"job": x.job, "dataset": x.dataset, "lastSeen": x.lastSeen, "lastRun": x.lastRun, "stale": x.stale}
}

// newLineages creates each LINEAGE that lineageState found none of (the dataset's lock, taken
// before it read, keeps another transaction from creating one; see the top), and lineages updates
// each one it read, found again by the element id it read; both as decide left them.
var newLineages = element{
	name:          "new lineages",
	relationships: []string{Lineage},
	query: `UNWIND $rows AS row
MATCH (j:Job {key: row.job})
MATCH (d:Dataset {key: row.dataset})
CREATE (j)-[l:LINEAGE]->(d)
` + lineageSet + `
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any { return lineageParams(r, false) },
}

var lineages = element{
	name:          "lineages",
	relationships: []string{Lineage},
	query: `UNWIND $rows AS row
MATCH ()-[l:LINEAGE]->() WHERE elementId(l) = row.id
` + lineageSet + `
RETURN count(*) AS n`,
	rows: func(r *rows) []map[string]any { return lineageParams(r, true) },
}

const lineageSet = `SET l.fingerprint = row.fingerprint, l.since = row.since, l.firstSeen = row.firstSeen,
    l.lastSeen = row.lastSeen, l.lastRun = row.lastRun, l.stale = row.stale`

// lineageParams are the rows of r.lineages that update a stored LINEAGE (stored) or create one.
func lineageParams(r *rows, stored bool) []map[string]any {
	var out []map[string]any
	for _, x := range r.lineages {
		if (x.id != "") != stored {
			continue
		}
		var stale any
		if x.stale {
			stale = true
		}
		out = append(out, map[string]any{"id": x.id, "job": x.job, "dataset": x.dataset, "fingerprint": x.fingerprint, "since": x.since,
			"firstSeen": x.firstSeen, "lastSeen": x.lastSeen, "lastRun": x.lastRun, "stale": stale})
	}
	return out
}
