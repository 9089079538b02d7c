package graph

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/colline/colline/plan"
)

func TestDatasetsWrittenReach(t *testing.T) {
	d := testDriver(t)
	w, r := NewWriter(d, ""), NewReader(d, "")
	ctx := context.Background()
	p := testPrefix(t)
	if err := w.Write(ctx, fixture(p, t0, "")); err != nil {
		t.Fatal(err)
	}
	mine := func(ds []plan.Dataset) []string {
		var out []string
		for _, x := range ds {
			if strings.HasPrefix(x.Key, p) {
				var cols []string
				for _, c := range x.Columns {
					cols = append(cols, c.Name+":"+c.Type)
				}
				out = append(out, fmt.Sprintf("%s %s (%s)", strings.TrimPrefix(x.Key, p), x.Kind, strings.Join(cols, ", ")))
			}
		}
		return out
	}
	ds, err := r.Datasets(ctx, "table")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mine(ds), []string{"b table (id:string, amount:string)", "c table (total:string)"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tables = %q, want %q", got, want)
	}

	// Only the keys asked for, the ones the graph holds; a version per key held.
	byKey, err := r.DatasetsByKey(ctx, []string{p + "b", p + "nowhere"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mine(byKey), []string{"b table (id:string, amount:string)"}; !reflect.DeepEqual(got, want) {
		t.Errorf("DatasetsByKey = %q, want %q", got, want)
	}
	v1, err := r.Versions(ctx, []string{p + "b", p + "c", p + "nowhere"})
	if err != nil {
		t.Fatal(err)
	}
	if _, held := v1[p+"nowhere"]; len(v1) != 2 || held || v1[p+"b"] == "" {
		t.Errorf("Versions = %q, want b and c only", v1)
	}

	// A newer event lists b with other columns in another order: those are b's columns now.
	later := fixture(p, t0.Add(time.Hour), "-2")[:1]
	b := &later[0].Lineage.Writes[0].Dataset
	b.Columns = []plan.Column{{Key: b.Key + "#extra", Name: "extra", Type: "int"}, {Key: b.Key + "#id", Name: "id", Type: "bigint"}}
	later[0].Lineage.Edges = later[0].Lineage.Edges[:1]
	if err := w.Write(ctx, later); err != nil {
		t.Fatal(err)
	}
	if ds, err = r.Datasets(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"a path (id:string, amount:string)", "b table (extra:int, id:bigint)", "c table (total:string)"}
	if got := mine(ds); !reflect.DeepEqual(got, want) {
		t.Errorf("after a newer event, datasets = %q, want %q", got, want)
	}
	// b's version moved (a cache reads it again), c's did not; DatasetsByKey gives b's new columns.
	v2, err := r.Versions(ctx, []string{p + "b", p + "c"})
	if err != nil {
		t.Fatal(err)
	}
	if v2[p+"b"] == v1[p+"b"] || v2[p+"c"] != v1[p+"c"] {
		t.Errorf("versions after a newer event of b: %q, before: %q", v2, v1)
	}
	if byKey, err = r.DatasetsByKey(ctx, []string{p + "b"}); err != nil {
		t.Fatal(err)
	}
	if got, want := mine(byKey), []string{"b table (extra:int, id:bigint)"}; !reflect.DeepEqual(got, want) {
		t.Errorf("DatasetsByKey after a newer event = %q, want %q", got, want)
	}

	// What the graph says is written into b: by every job, and by the one that writes it.
	lin, err := r.Written(ctx, []string{p + "b"}, "")
	if err != nil {
		t.Fatal(err)
	}
	roles := func(ts []plan.Transformation) string {
		var out []string
		for _, x := range ts {
			out = append(out, fmt.Sprintf("%s %q", x, x.Expr))
		}
		return strings.Join(out, ", ")
	}
	render := func(l *plan.Lineage) string {
		var lines []string
		for _, e := range l.Edges {
			lines = append(lines, fmt.Sprintf("%s -> %s %s", strings.TrimPrefix(e.Source, p), strings.TrimPrefix(e.Target, p), roles(e.Transformations)))
		}
		for _, e := range l.RowDeps {
			lines = append(lines, fmt.Sprintf("%s => %s %s", strings.TrimPrefix(e.Source, p), strings.TrimPrefix(e.Target, p), roles(e.Transformations)))
		}
		return strings.Join(lines, "\n")
	}
	// (the first event's a#amount -> b#amount stays: the graph keeps every edge it was told of)
	wantLin := `a#amount -> b#amount DIRECT/TRANSFORMATION "amount * 100", INDIRECT/CONDITIONAL "amount > 0"` + "\n" +
		`a#id -> b#id DIRECT/IDENTITY "id"` + "\n" +
		`a#amount => b INDIRECT/FILTER "amount > 0"`
	if got := render(lin); got != wantLin {
		t.Errorf("written into b:\n%s\nwant\n%s", got, wantLin)
	}
	if len(lin.Writes) != 1 || len(lin.Writes[0].Columns) != 2 || lin.Writes[0].Columns[0].Name != "extra" {
		t.Errorf("written datasets %+v, want b with its newest columns", lin.Writes)
	}
	if lin, err = r.Written(ctx, []string{p + "b"}, p+"etl/report"); err != nil || render(lin) != "" {
		t.Errorf("written into b by the report job (which reads it): %q, %v", render(lin), err)
	}

	// Downstream of a#id: b#id (one FEEDS), then c#total (b#id decides c's rows: DECIDES_ROWS + HAS_COLUMN).
	reached, err := r.Reach(ctx, []string{p + "a#id", p + "c#total"}, 5)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range reached {
		got = append(got, fmt.Sprintf("%s: %s in %s, %d hops via %s", strings.TrimPrefix(x.From, p), strings.TrimPrefix(x.Column, p),
			strings.TrimPrefix(x.Dataset, p), x.Hops, strings.ReplaceAll(strings.Join(x.Jobs, " > "), p, "")))
	}
	wantReach := []string{"a#id: b#id in b, 1 hops via etl/load", "a#id: c#total in c, 2 hops via etl/load > etl/report"}
	if !reflect.DeepEqual(got, wantReach) {
		t.Errorf("reach = %q, want %q", got, wantReach)
	}
	if _, err := r.Reach(ctx, []string{p + "a#id"}, 21); err == nil {
		t.Error("depth 21 accepted")
	}
}

// The new reads run in read transactions of a read-only session: Neo4j refuses a write in them.
func TestReadRefusesWrites(t *testing.T) {
	d := testDriver(t)
	r := NewReader(d, "")
	p := testPrefix(t)
	_, err := r.read(context.Background(), `CREATE (:Dataset {key: $k})`, map[string]any{"k": p + "x"})
	if err == nil {
		t.Fatal("a CREATE in a read transaction succeeded")
	}
	if lines := snapshot(t, d, p); len(lines) != 0 {
		t.Errorf("written anyway: %v", lines)
	}
	t.Logf("refused: %v", err)
}
