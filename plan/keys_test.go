package plan

import (
	"reflect"
	"testing"

	"github.com/colline/colline/events"
)

// The keys are how lineage crosses jobs: these cases pin them.
func TestIdentify(t *testing.T) {
	tests := []struct {
		name string
		in   events.Dataset
		want []string
	}{
		{"session catalog table", events.Dataset{Kind: "table", Catalog: "spark_catalog", Namespace: []string{"Sales"}, Name: "Orders"},
			[]string{"spark_catalog/sales.orders"}},
		{"table without catalog", events.Dataset{Kind: "table", Namespace: []string{"db"}, Name: "t"},
			[]string{"spark_catalog/db.t"}},
		{"v2 catalog nested namespace", events.Dataset{Kind: "table", Catalog: "lake", Namespace: []string{"a", "b"}, Name: "t"},
			[]string{"lake/a.b.t"}},
		{"persistent view", events.Dataset{Kind: "view", Catalog: "spark_catalog", Namespace: []string{"db"}, Name: "v"},
			[]string{"spark_catalog/db.v"}},
		{"local file", events.Dataset{Kind: "path", Paths: []string{"file:/data/in/orders/"}},
			[]string{"file/data/in/orders"}},
		{"object store paths", events.Dataset{Kind: "path", Paths: []string{"s3a://bucket/a", "hdfs://nn:8020/b"}},
			[]string{"s3a://bucket/a", "hdfs://nn:8020/b"}},
		{"jdbc with credentials", events.Dataset{Kind: "jdbc", URL: "jdbc:postgresql://u:p@db:5432/shop?password=x", Table: "public.orders"},
			[]string{"postgresql://db:5432/shop/public.orders"}},
		{"jdbc query", events.Dataset{Kind: "jdbc", URL: "jdbc:mysql://db/shop", SQL: "select 1"},
			[]string{"mysql://db/shop/query-822ae07d4783"}},
		{"kafka topics", events.Dataset{Kind: "kafka", Servers: "k1:9092,k2:9092", Topics: []string{"a", "b"}},
			[]string{"kafka://k1:9092/a", "kafka://k1:9092/b"}},
		{"local data has no identity", events.Dataset{Kind: "local"}, nil},
		{"rdd has no identity", events.Dataset{Kind: "rdd"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, d := range Identify(&tc.in) {
				got = append(got, d.Key)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Identify(%+v) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestColumnKey(t *testing.T) {
	if got := ColumnKey("spark_catalog/db.t", "Amount"); got != "spark_catalog/db.t#amount" {
		t.Errorf("ColumnKey = %q", got)
	}
}

// Named keys an OpenLineage identity as Identify keys the listener's: the same path or topic has
// the same key whichever reported it.
func TestNamed(t *testing.T) {
	for _, tc := range []struct{ ns, name, key, kind, location string }{
		{"file", "/data/in/orders/", "file/data/in/orders", "path", "file:/data/in/orders"},
		{"s3a://bucket", "a", "s3a://bucket/a", "path", "s3a://bucket/a"},
		{"hdfs://nn:8020", "/b", "hdfs://nn:8020/b", "path", "hdfs://nn:8020/b"},
		{"kafka://k1:9092", "a", "kafka://k1:9092/a", "kafka", ""},
		{"Spark_Catalog", "Sales.Orders", "spark_catalog/sales.orders", "table", ""},
		{"postgres://db:5432", "shop.public.Orders", "postgres://db:5432/shop.public.Orders", "table", ""},
		{"derby:memory:x", "PEOPLE", "derby:memory:x/PEOPLE", "table", ""},
	} {
		d := Named(tc.ns, tc.name)
		if d.Key != tc.key || d.Kind != tc.kind || d.Location != tc.location {
			t.Errorf("Named(%q, %q) = %q %q %q, want %q %q %q", tc.ns, tc.name, d.Key, d.Kind, d.Location, tc.key, tc.kind, tc.location)
		}
	}
	for _, in := range []events.Dataset{{Kind: "path", Paths: []string{"file:/data/in/orders/"}}, {Kind: "kafka", Servers: "k1:9092", Topics: []string{"a"}}} {
		l := Identify(&in)[0]
		if n := Named(l.Namespace, l.Name); n.Key != l.Key {
			t.Errorf("Named(Identify(%+v)) = %q, Identify %q", in, n.Key, l.Key)
		}
	}
}
