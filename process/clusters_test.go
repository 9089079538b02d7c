package process

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/colline/colline/events"
	"github.com/colline/colline/openlineage/alias"
)

// kafka_cluster_names (plan/testdata) writes a topic through 127.0.0.1:<port> and reads it through
// localhost:<port>, the same broker. Without cluster names the write and the read are two
// datasets; with COLLINE_KAFKA_CLUSTERS naming both servers one cluster they are one,
// kafka://<cluster>/<topic>, so the reading job's columns come from the writing job's.
func TestKafkaClusterNames(t *testing.T) {
	for _, line := range []string{"3.5", "4.1"} {
		t.Run(line, func(t *testing.T) {
			files, _ := filepath.Glob(filepath.Join("..", "plan", "testdata", "spark-"+line, "kafka_cluster_names", "*.json"))
			if len(files) == 0 {
				t.Fatal("no capture of kafka_cluster_names")
			}
			var values [][]byte
			port := ""
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				values = append(values, data)
				env, err := events.Decode(data)
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range env.Nodes {
					if n.Write != nil && n.Write.Dataset.Kind == "kafka" {
						port = n.Write.Dataset.Servers[strings.LastIndexByte(n.Write.Dataset.Servers, ':')+1:]
					}
				}
			}
			if port == "" {
				t.Fatal("no Kafka write in the capture")
			}
			const topic = "colline.scenario.kafka_cluster_names"
			topics := func(s Step) (writes, reads []string) {
				for _, v := range values {
					it, err := s.Item(v)
					if err != nil {
						t.Fatal(err)
					}
					for _, w := range it.Lineage.Writes {
						if w.Kind == "kafka" {
							writes = append(writes, w.Key)
						}
					}
					for _, r := range it.Lineage.Reads {
						if r.Kind == "kafka" {
							reads = append(reads, r.Key)
						}
					}
				}
				return writes, reads
			}
			writes, reads := topics(Step{})
			if want := []string{"kafka://127.0.0.1:" + port + "/" + topic}; !slices.Equal(writes, want) {
				t.Errorf("without cluster names, writes %v, want %v", writes, want)
			}
			if want := []string{"kafka://localhost:" + port + "/" + topic}; !slices.Equal(reads, want) {
				t.Errorf("without cluster names, reads %v, want %v", reads, want)
			}
			clusters, err := alias.ParseClusters("capture=127.0.0.1:" + port + ",localhost:" + port)
			if err != nil {
				t.Fatal(err)
			}
			writes, reads = topics(Step{Clusters: clusters})
			want := []string{"kafka://capture/" + topic}
			if !slices.Equal(writes, want) || !slices.Equal(reads, want) {
				t.Errorf("with cluster names, writes %v and reads %v, want both %v", writes, reads, want)
			}
		})
	}
}

func TestParseClusters(t *testing.T) {
	c, err := alias.ParseClusters("prod=K1:9092,k2:9092; dev=dk1:9092")
	if err != nil {
		t.Fatal(err)
	}
	for servers, want := range map[string]string{
		"k1:9092":                  "prod",
		"zz:1,k2:9092":             "prod",
		" dk1:9092 ":               "dev",
		"kafka://k1:9092":          "prod",
		"other:9092":               "",
		"other:9092,dk1:9092,k1:1": "dev",
	} {
		if got := c.Of(servers); got != want {
			t.Errorf("Of(%q) = %q, want %q", servers, got, want)
		}
	}
}
