package graph

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colline/colline/events"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
)

// listed is an event of job "j" that writes dataset t (p+"t") and lists its columns: names with
// an optional ":type" (default string), in order.
func listed(p, id string, at time.Time, cols ...string) record.Item {
	d := plan.Dataset{Key: p + "t", Namespace: p + "ns", Name: "t", Kind: "table"}
	for _, c := range cols {
		name, typ, ok := strings.Cut(c, ":")
		if !ok {
			typ = "string"
		}
		d.Columns = append(d.Columns, plan.Column{Key: d.Key + "#" + name, Name: name, Type: typ})
	}
	return record.Item{
		Event: &events.Envelope{SchemaVersion: "1.0", EventID: p + id, EmittedAt: at.Add(time.Second).Format(time.RFC3339Nano),
			Producer: events.Producer{Spark: "3.5.8"}, App: events.App{ID: "app-" + id, Name: "j", Namespace: p + "etl"},
			Query: events.Query{ExecutionID: 1, FuncName: "command", Status: "success", EndedAt: at.Format(time.RFC3339Nano)}},
		Lineage: &plan.Lineage{Writes: []plan.Write{{Dataset: d, Mode: "overwrite"}}},
	}
}

// storedColumns renders t's columns as stored (their own lastSeen, not ColumnLastSeen).
func storedColumns(t *testing.T, r *Reader, p string) []string {
	t.Helper()
	res, err := r.read(context.Background(), `MATCH (:Dataset {key: $key})-[:HAS_COLUMN]->(c:Column)
RETURN c.key + ' ' + toString(c.lastSeen) + ' ' + coalesce(c.schema, '-') + ' ' + c.dataType + ' ' + toString(c.position) AS line ORDER BY line`,
		map[string]any{"key": p + "t"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rec := range res.Records {
		l, _ := get[string](rec, "line")
		out = append(out, l)
	}
	return out
}

// TestReRunsConfirmSchema: a re-run listing a dataset's columns as stored writes none of them and
// moves the dataset's schemaSeen, which readers give the columns as their lastSeen; another
// listing writes them, and the columns it drops keep the last time they were seen.
func TestReRunsConfirmSchema(t *testing.T) {
	d := testDriver(t)
	w, r := NewWriter(d, ""), NewReader(d, "")
	ctx := context.Background()
	p := testPrefix(t)
	t.Cleanup(func() { wipe(t, d, p) })
	write := func(it record.Item) {
		t.Helper()
		if err := w.Write(ctx, []record.Item{it}); err != nil {
			t.Fatal(err)
		}
	}
	lastSeen := func() map[string]time.Time {
		t.Helper()
		det, err := r.Dataset(ctx, p+"t")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]time.Time{}
		for _, c := range det.Columns {
			out[strings.TrimPrefix(c.Key, p+"t#")] = *c.LastSeen
		}
		return out
	}
	write(listed(p, "r0", t0, "id", "amount"))
	stored := storedColumns(t, r, p)
	h := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) }
	for i := 1; i <= 3; i++ {
		write(listed(p, fmt.Sprintf("r%d", i), h(i), "id", "amount"))
	}
	if got := storedColumns(t, r, p); !slices.Equal(got, stored) {
		t.Errorf("three re-runs wrote columns:\n%s\nwant as before\n%s", strings.Join(got, "\n"), strings.Join(stored, "\n"))
	}
	if got := lastSeen(); !got["id"].Equal(h(3)) || !got["amount"].Equal(h(3)) {
		t.Errorf("lastSeen after re-runs = %v, want both %v", got, h(3))
	}
	// amount leaves, total comes: amount keeps h(3), the others are seen at h(4)
	write(listed(p, "r4", h(4), "id", "total:bigint"))
	if got := lastSeen(); !got["id"].Equal(h(4)) || !got["total"].Equal(h(4)) || !got["amount"].Equal(h(3)) {
		t.Errorf("lastSeen after a new listing = %v, want id and total %v, amount %v", got, h(4), h(3))
	}
	ds, err := r.DatasetsByKey(ctx, []string{p + "t"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || len(ds[0].Columns) != 2 || ds[0].Columns[0].Name != "id" || ds[0].Columns[1].Name != "total" || ds[0].Columns[1].Type != "bigint" {
		t.Errorf("the current schema = %+v, want id, total bigint", ds)
	}
	// an older run with the old listing arriving late changes neither the schema nor a lastSeen
	write(listed(p, "r2b", h(2).Add(time.Minute), "id", "amount"))
	if got := lastSeen(); !got["id"].Equal(h(4)) || !got["total"].Equal(h(4)) || !got["amount"].Equal(h(3)) {
		t.Errorf("lastSeen after a late old run = %v, want id and total %v, amount %v", got, h(4), h(3))
	}
}

// TestSchemaVersionsAnyOrder: events listing a dataset's columns in one of a few ways (mostly the
// same: re-runs), at random times, written out of order in batches of random sizes, leave every
// column with the firstSeen and lastSeen of the events that listed it, the type and place of the
// newest of them, and the newest event's listing as the dataset's current schema.
func TestSchemaVersionsAnyOrder(t *testing.T) {
	d := testDriver(t)
	w, r := NewWriter(d, ""), NewReader(d, "")
	ctx := context.Background()
	listings := [][]string{
		{"a", "b", "c"}, {"a", "b", "c"}, {"a", "b", "c"}, {"a", "b", "c"},
		{"a", "b", "c", "d"}, {"b", "a", "c"}, {"a", "b", "c:int"}, {"d", "a"},
	}
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			p := testPrefix(t)
			t.Cleanup(func() { wipe(t, d, p) })
			rng := rand.New(rand.NewPCG(seed, 7))
			type event struct {
				at   time.Time
				cols []string
			}
			var evs []event
			for _, m := range rng.Perm(60) { // distinct minutes: no ties
				evs = append(evs, event{at: t0.Add(time.Duration(m) * time.Minute), cols: listings[rng.IntN(len(listings))]})
			}
			for i := 0; i < len(evs); {
				n := 1 + rng.IntN(5)
				var batch []record.Item
				for _, e := range evs[i:min(i+n, len(evs))] {
					batch = append(batch, listed(p, fmt.Sprint(e.at.Unix()), e.at, e.cols...))
				}
				if err := w.Write(ctx, batch); err != nil {
					t.Fatal(err)
				}
				i += n
				// what the events so far say of each column
				type want struct {
					first, last time.Time
					typ         string
					pos         int
				}
				wants := map[string]*want{}
				var newest event
				for _, e := range evs[:min(i, len(evs))] {
					if e.at.After(newest.at) {
						newest = e
					}
					for pos, c := range e.cols {
						name, typ, ok := strings.Cut(c, ":")
						if !ok {
							typ = "string"
						}
						x := wants[name]
						if x == nil {
							x = &want{first: e.at, last: e.at}
							wants[name] = x
						}
						x.first = minTime(x.first, e.at)
						if !e.at.Before(x.last) {
							x.last, x.typ, x.pos = e.at, typ, pos
						}
					}
				}
				det, err := r.Dataset(ctx, p+"t")
				if err != nil {
					t.Fatal(err)
				}
				if len(det.Columns) != len(wants) {
					t.Fatalf("after %d events: %d columns, want %d", i, len(det.Columns), len(wants))
				}
				for _, c := range det.Columns {
					x := wants[c.Name]
					if x == nil || !c.FirstSeen.Equal(x.first) || !c.LastSeen.Equal(x.last) || c.DataType != x.typ {
						t.Errorf("after %d events: column %s first %v last %v type %s, want %+v", i, c.Name, c.FirstSeen, c.LastSeen, c.DataType, x)
					}
				}
				ds, err := r.DatasetsByKey(ctx, []string{p + "t"})
				if err != nil || len(ds) != 1 {
					t.Fatalf("DatasetsByKey = %v, %v", ds, err)
				}
				var got, exp []string
				for pos, c := range ds[0].Columns { // in schema order
					got = append(got, fmt.Sprintf("%s:%s@%d", c.Name, c.Type, pos))
				}
				for pos, c := range newest.cols {
					name, typ, ok := strings.Cut(c, ":")
					if !ok {
						typ = "string"
					}
					exp = append(exp, fmt.Sprintf("%s:%s@%d", name, typ, pos))
				}
				if !slices.Equal(got, exp) {
					t.Errorf("after %d events: the current schema %v, want the newest listing's %v", i, got, exp)
				}
			}
		})
	}
}
