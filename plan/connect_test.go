package plan

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/colline/colline/events"
)

// A JSON field written to a Kafka topic by one job and read back by another connects, field to
// field: in the captured events of kafka_json_roundtrip (scenarios/kafka_json_roundtrip.java),
// the write of to_json(struct(id, customer, amount * 2 AS doubled)) feeds the topic's
// value.<field> from the orders columns, and the read of from_json(CAST(value AS STRING), …)
// feeds the table's columns from the same value.<field> keys.
func TestKafkaJSONFieldsConnect(t *testing.T) {
	for _, line := range []string{"3.5", "4.1"} {
		t.Run(line, func(t *testing.T) {
			files, _ := filepath.Glob(filepath.Join("testdata", "spark-"+line, "kafka_json_roundtrip", "*.json"))
			if len(files) == 0 {
				t.Skip("no captured events for this line")
			}
			into := map[string][]string{} // topic field key -> what feeds it (the writing job)
			out := map[string][]string{}  // topic field key -> what it feeds (the reading jobs)
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				env, err := events.Decode(data)
				if err != nil {
					t.Fatal(err)
				}
				lin, err := Extract(env)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range lin.Edges {
					if strings.HasPrefix(e.Target, "kafka://") {
						into[e.Target] = append(into[e.Target], e.Source)
					}
					if strings.HasPrefix(e.Source, "kafka://") {
						out[e.Source] = append(out[e.Source], e.Target)
					}
				}
			}
			var paths []string
			for field, srcs := range into {
				for _, dst := range out[field] {
					for _, src := range srcs {
						paths = append(paths, src+" -> "+field[strings.LastIndex(field, "#"):]+" -> "+dst)
					}
				}
			}
			sort.Strings(paths)
			want := []string{
				"spark_catalog/kafka_json_roundtrip.orders#amount -> #value.doubled -> spark_catalog/kafka_json_roundtrip.dst#doubled",
				"spark_catalog/kafka_json_roundtrip.orders#customer -> #value.customer -> spark_catalog/kafka_json_roundtrip.dst#customer",
				"spark_catalog/kafka_json_roundtrip.orders#id -> #value.id -> spark_catalog/kafka_json_roundtrip.dst#id",
			}
			for _, w := range want {
				found := false
				for _, p := range paths {
					found = found || p == w
				}
				if !found {
					t.Errorf("no path %s; paths through the topic:\n%s", w, strings.Join(paths, "\n"))
				}
			}
		})
	}
}
