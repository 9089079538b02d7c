package events_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/colline/colline/events"
)

// Every event the real listener captured validates against the published JSON Schema, and
// decodes.
func TestCapturedEventsMatchSchema(t *testing.T) {
	c := jsonschema.NewCompiler()
	schema, err := c.Compile("../docs/event.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../plan/testdata/spark-*/*/*.json")
	hive, _ := filepath.Glob("../plan/testdata/hive-*/*/*.json")
	// and the Spark Connect server's (dev/capture-connect): query.connect on every event (1.5)
	connect, _ := filepath.Glob("../plan/testdata/connect/spark-*/*/*.json")
	if len(connect) == 0 {
		t.Fatal("no Spark Connect events under plan/testdata/connect")
	}
	files = append(append(files, hive...), connect...)
	if len(files) == 0 {
		t.Fatal("no captured events under plan/testdata")
	}
	// and the analyzer's (colline analyze, dev/capture-analyzed): the same format, marked analyzed
	analyzed, _ := filepath.Glob("../plan/testdata/analyzed/spark-*/*/*.json")
	if len(analyzed) == 0 {
		t.Fatal("no analyzed events under plan/testdata/analyzed")
	}
	for _, f := range analyzed {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		env, err := events.Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		// markers.analyzed came with 1.4; the analyzer writes the listener's current version
		if !env.Markers.Analyzed || env.Producer.Name != "colline-analyze" || (env.SchemaVersion != "1.4" && env.SchemaVersion != "1.5") {
			t.Errorf("%s: analyzed %v, producer %q, version %s: want an analyzed event of schema 1.4 or later", f, env.Markers.Analyzed, env.Producer.Name, env.SchemaVersion)
		}
	}
	files = append(files, analyzed...)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := schema.Validate(doc); err != nil {
			t.Errorf("%s does not match docs/event.schema.json: %v", f, err)
		}
		if _, err := events.Decode(data); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	t.Logf("%d captured events validated", len(files))
}
