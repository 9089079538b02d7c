package watch

import (
	"context"
	"os"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
	"github.com/colline/colline/tags"
)

type next struct{ n int }

func (x *next) Emit(_ context.Context, items []record.Item) error { x.n += len(items); return nil }

// TestWatcher: the skeleton's country_revenue event (captured), with every column of orders tagged pii and
// pii allowed only in shop.orders: the event carries pii unmasked into country_revenue.revenue
// (a sum) and only masked into orders (a count): one arrival counted; the batch goes on to Next.
// A tag allowed there, or without allowed destinations, counts nothing.
func TestWatcher(t *testing.T) {
	data, err := os.ReadFile("../../plan/testdata/spark-3.5/skeleton/0003-6-InsertIntoHadoopFsRelationCommand.json")
	if err != nil {
		t.Fatal(err)
	}
	it, err := process.Step{}.Item(data)
	if err != nil {
		t.Fatal(err)
	}
	rules := []tags.Rule{{Tag: tags.Tag{Key: "pii", Value: "x", Source: "file:t"}, Dataset: "spark_catalog/shop.orders", Column: "*"}}
	for _, tc := range []struct {
		name    string
		allowed []tags.Glob
		want    float64
	}{
		{"not allowed", []tags.Glob{"spark_catalog/shop.orders"}, 1}, // amount → revenue; order_id → orders is masked; customer_id and status only decide rows
		{"allowed", []tags.Glob{"spark_catalog/shop.*"}, 0},
		{"no allowed destinations", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tags.NewMemory(rules, []tags.Policy{{Key: "pii", Aggregation: tags.AggregationPass, Allowed: tc.allowed}})
			g.AddLineage(it.Lineage, "spark_catalog/colline-spark-sql") // the graph as written
			reg := prometheus.NewRegistry()
			n := &next{}
			w := &Watcher{Graph: g, Next: n, Metrics: NewMetrics(reg)}
			if err := w.Emit(context.Background(), []record.Item{it}); err != nil {
				t.Fatal(err)
			}
			if got := testutil.ToFloat64(w.Metrics.arrivals.WithLabelValues("pii")); got != tc.want {
				t.Errorf("arrivals %v, want %v", got, tc.want)
			}
			if n.n != 1 {
				t.Errorf("next got %d items", n.n)
			}
		})
	}
}
