package events

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A minimal Hive event: one edge from a source column to a written column.
const minimalHive = `{"schemaVersion":"1.4","eventId":"h1","hive":{"operation":"QUERY",` +
	`"outputs":[{"dataset":{"kind":"table","namespace":["db"],"name":"t"},"mode":"append","columns":["a"],"columnTypes":["int"]}],` +
	`"edges":[{"sources":[1],"targets":[0],"edgeType":"PROJECTION"}],` +
	`"vertices":[{"id":0,"vertexType":"COLUMN","vertexId":"db.t.a"},{"id":1,"vertexType":"COLUMN","vertexId":"db.s.a"}]}}`

func withHive(old, new string) string {
	if !strings.Contains(minimalHive, old) {
		panic(old)
	}
	return strings.Replace(minimalHive, old, new, 1)
}

func TestDecodeHive(t *testing.T) {
	env, err := Decode([]byte(minimalHive))
	if err != nil {
		t.Fatal(err)
	}
	h := env.Hive
	if h == nil || len(env.Nodes) != 0 || len(h.Edges) != 1 || h.Edges[0].Sources[0] != 1 || h.Vertices[1].VertexID != "db.s.a" ||
		h.Outputs[0].ColumnTypes[0] != "int" {
		t.Fatalf("decoded %+v", env)
	}
}

// Every way a Hive body is rejected, with the exact error.
func TestDecodeHiveErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"nodes and hive", withHive(`"eventId":"h1",`, `"eventId":"h1","nodes":[{"id":0,"class":"x"}],`),
			`invalid event: event h1 has both plan nodes and a hive body; an event is one or the other`},
		{"vertex id not its index", withHive(`{"id":1,`, `{"id":4,`),
			`invalid event: event h1: hive.vertices[1] has id 4; ids are the indexes`},
		{"edge to no vertex", withHive(`"sources":[1]`, `"sources":[9]`),
			`invalid event: event h1: hive.edges[0].sources names vertex 9, outside vertices[0:2]`},
		{"unknown edge type", withHive(`"PROJECTION"`, `"FLOW"`),
			`invalid event: event h1: hive.edges[0] has edgeType "FLOW", want PROJECTION or PREDICATE`},
		{"unknown vertex type", withHive(`"vertexType":"COLUMN","vertexId":"db.s.a"`, `"vertexType":"ROW","vertexId":"db.s.a"`),
			`invalid event: event h1: hive.vertices[1] has vertexType "ROW", want COLUMN or TABLE`},
		{"output with a query", withHive(`"mode":"append"`, `"mode":"append","query":0`),
			`invalid event: event h1: hive.outputs[0] has a query; Hive outputs have none`},
		{"types and columns differ", withHive(`"columnTypes":["int"]`, `"columnTypes":["int","string"]`),
			`invalid event: event h1: hive.outputs[0] has 1 columns and 2 columnTypes`},
		{"source as a string", withHive(`"sources":[1]`, `"sources":["1"]`),
			`invalid event: hive.edges[0].sources[0] at byte 212: want an integer, found a string`},
		{"key in another case", withHive(`"edgeType"`, `"EdgeType"`),
			`invalid event: hive.edges[0]: key "EdgeType" at byte 229: keys are case-sensitive, the field is "edgeType"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.in))
			if err == nil || !errors.Is(err, ErrInvalid) || err.Error() != tc.want {
				t.Errorf("Decode error\n got: %v\nwant: %s", err, tc.want)
			}
		})
	}
}

// A LineageLogger record (the shape Hive logs outside test mode) becomes a Hive event: the
// same record gives the same event id, the job is named after the first target's table.
func TestDecodeLineageLog(t *testing.T) {
	rec := `{"version":"1.0","user":"etl","timestamp":1796200810,"duration":1500,"jobIds":["job_1"],"engine":"mr",` +
		`"database":"default","hash":"h","queryText":"insert into table d1 select x from s",` +
		`"edges":[{"sources":[1],"targets":[0],"expression":"UDFToInteger(x)","edgeType":"PROJECTION"}],` +
		`"vertices":[{"id":0,"vertexType":"COLUMN","vertexId":"default.d1.a"},{"id":1,"vertexType":"COLUMN","vertexId":"default.s.x"}]}`
	if !IsLineageLog([]byte(rec)) || IsLineageLog([]byte(minimalHive)) || IsLineageLog([]byte(minimal)) {
		t.Fatal("IsLineageLog does not tell a LineageLogger record from colline events")
	}
	for in, want := range map[string]bool{ // the schemaVersion prefix is a shortcut, the decoder decides the rest
		" \r\n\t" + minimal: false, `{"edges":[],"vertices":[],"schemaVersion":"1.0"}`: false,
		`{"edges":[],"vertices":[]}`: true, ` {"edges":[],"vertices":[]}`: true, `{"schemaVersion"`: false,
	} {
		if IsLineageLog([]byte(in)) != want {
			t.Errorf("IsLineageLog(%q) = %v, want %v", in, !want, want)
		}
	}
	env, err := DecodeLineageLog([]byte(rec), LineageLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := DecodeLineageLog([]byte(rec), LineageLogOptions{})
	if env.EventID != again.EventID || env.App.Name != "hive.default.d1" || env.App.User != "etl" ||
		env.Query.EndedAt != "2026-12-02T08:40:11.5Z" || env.Hive.Operation != "QUERY" || env.App.Namespace != "default" {
		t.Fatalf("decoded %+v", env)
	}
	// test mode omits the timestamp: the fallback time stamps it, else it is refused
	test := strings.Replace(rec, `"user":"etl","timestamp":1796200810,"duration":1500,"jobIds":["job_1"],`, ``, 1)
	if _, err := DecodeLineageLog([]byte(test), LineageLogOptions{}); err == nil ||
		err.Error() != "invalid event: LineageLogger record without a timestamp (hive.in.test=true omits it) and no time to stamp it with" {
		t.Errorf("no timestamp: %v", err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if env, err := DecodeLineageLog([]byte(test), LineageLogOptions{Time: at, Namespace: "prod"}); err != nil ||
		env.Query.EndedAt != "2026-01-02T03:04:05Z" || env.App.Namespace != "prod" {
		t.Errorf("fallback time: %v %+v", err, env)
	}
	for _, bad := range []struct{ in, want string }{
		{strings.Replace(rec, `"1.0"`, `"2.0"`, 1), `unsupported schema version: LineageLogger record version "2.0", this consumer reads 1.x`},
		{strings.Replace(rec, `"sources":[1]`, `"sources":[7]`, 1), `invalid event: event `},
		{strings.Replace(rec, `"duration":1500`, `"duration":"1500"`, 1), `invalid event: duration at byte 64: want an integer, found a string`},
		{rec + "{}", `invalid event: not JSON at byte 406 of 408: "{}" after the record`},
	} {
		if _, err := DecodeLineageLog([]byte(bad.in), LineageLogOptions{}); err == nil || !strings.HasPrefix(err.Error(), bad.want) {
			t.Errorf("DecodeLineageLog error\n got: %v\nwant: %s…", err, bad.want)
		}
	}
	for text, op := range map[string]string{
		"create table t as select 1": "CREATETABLE_AS_SELECT", "CREATE OR REPLACE VIEW v AS SELECT 1": "CREATEVIEW",
		"alter view v as select 2": "ALTERVIEW_AS", "from s insert into t select a": "QUERY",
	} {
		if got := operation(text); got != op {
			t.Errorf("operation(%q) = %s, want %s", text, got, op)
		}
	}
}
