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
	files = append(files, hive...)
	if len(files) == 0 {
		t.Fatal("no captured events under plan/testdata")
	}
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
