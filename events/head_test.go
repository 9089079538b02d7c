package events

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// DecodeHead splits an event into the envelope Decode gives, without its nodes, and the bytes
// from the key "nodes" on, which DecodeWithPlan returns too when nodes is the last key.
func TestDecodeHead(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "plan", "testdata", "spark-*", "*", "*.json"))
	if len(files) < 100 {
		t.Fatalf("%d captured events", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		full, plan, err := DecodeWithPlan(data)
		if err != nil {
			continue // refusals are tested elsewhere
		}
		head, headPlan, ok := DecodeHead(data)
		if full.Hive != nil {
			if ok {
				t.Errorf("%s: a Hive event has a head", f)
			}
			continue
		}
		if !ok || plan == nil || !bytes.Equal(plan, headPlan) || !bytes.HasPrefix(plan, []byte(`:`)) {
			t.Fatalf("%s: ok %v, plan %d bytes, head's plan %d bytes", f, ok, len(plan), len(headPlan))
		}
		want := *full
		want.Nodes = nil
		if !reflect.DeepEqual(*head, want) {
			t.Errorf("%s: head %+v, want %+v", f, *head, want)
		}
		// a key after the nodes: valid, but no plan to compare
		moved := append(bytes.TrimRight(data, "} \n"), []byte(`,"x":1}`)...)
		if _, plan, err := DecodeWithPlan(moved); err != nil || plan != nil {
			t.Errorf("%s with a key after nodes: plan %d bytes, %v", f, len(plan), err)
		}
	}
	for what, v := range map[string]string{
		"no nodes":              `{"schemaVersion":"1.1","eventId":"e"}`,
		"version after nodes":   `{"eventId":"e","nodes":[],"schemaVersion":"1.1"}`,
		"no event id":           `{"schemaVersion":"1.1","nodes":[]}`,
		"a future major":        `{"schemaVersion":"2.0","eventId":"e","nodes":[]}`,
		"broken before nodes":   `{"schemaVersion":"1.1","eventId":"e",,"nodes":[]}`,
		"a Hive body before it": `{"schemaVersion":"1.4","eventId":"e","hive":{},"nodes":[]}`,
		"empty":                 ``,
	} {
		if _, _, ok := DecodeHead([]byte(v)); ok {
			t.Errorf("%s: DecodeHead ok", what)
		}
	}
}
