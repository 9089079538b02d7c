package emit

import (
	"context"
	"os"
	"testing"

	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
	"github.com/colline/colline/tags"
)

// sink keeps what it is sent.
type sink struct{ got []Event }

func (s *sink) Send(_ context.Context, evs []Event) ([]error, error) {
	s.got = append(s.got, evs...)
	return make([]error, len(evs)), nil
}

// TestEmitTags: the skeleton's country_revenue event (captured) emitted with a graph (in memory)
// where orders.amount is tagged pii and orders.order_id too: the output country_revenue carries
// pii on revenue (a sum carries it), not on orders (a count masks it), as a tags facet that
// validates against the spec's TagsDatasetFacet schema.
func TestEmitTags(t *testing.T) {
	data, err := os.ReadFile("../../plan/testdata/spark-3.5/skeleton/0003-6-InsertIntoHadoopFsRelationCommand.json")
	if err != nil {
		t.Fatal(err)
	}
	it, err := process.Step{}.Item(data)
	if err != nil {
		t.Fatal(err)
	}
	g := tags.NewMemory([]tags.Rule{{Tag: tags.Tag{Key: "pii", Value: "amount", Source: "dbt:shop"}, Dataset: "spark_catalog/shop.orders", Column: "amount"},
		{Tag: tags.Tag{Key: "pii", Value: "id", Source: "dbt:shop"}, Dataset: "spark_catalog/shop.orders", Column: "order_id"}}, nil)
	g.AddLineage(it.Lineage, "spark_catalog/colline-spark-sql")
	s := &sink{}
	if err := (&Emitter{Sink: s, Tags: g}).Emit(context.Background(), []record.Item{it}); err != nil {
		t.Fatal(err)
	}
	if len(s.got) != 1 {
		t.Fatalf("%d events", len(s.got))
	}
	v, err := openlineage.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := v.Validate(s.got[0].Value)
	if err != nil {
		t.Fatalf("the emitted event does not validate: %v", err)
	}
	checked := false
	for _, loc := range rep.Checked {
		checked = checked || loc == "/outputs/0/facets/tags"
	}
	if !checked {
		t.Errorf("the tags facet was not checked against its schema: %v", rep.Checked)
	}
	ev, err := openlineage.Decode(s.got[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := ev.Outputs[0].Tags()
	if err != nil || !ok {
		t.Fatalf("no tags facet: %v", err)
	}
	want := []openlineage.TagField{{Key: "pii", Value: "amount", Source: "dbt:shop", Field: "revenue"}}
	if len(got) != 1 || got[0] != want[0] {
		t.Errorf("tags facet %+v, want %+v", got, want)
	}
}
