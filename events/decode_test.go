package events

import (
	"errors"
	"strings"
	"testing"
)

const minimal = `{"schemaVersion":"1.0","eventId":"e1","nodes":[` +
	`{"id":0,"class":"a.Insert","children":[1]},{"id":1,"class":"a.Project","children":[]}]}`

// with returns minimal with the first old replaced by new.
func with(old, new string) string {
	if !strings.Contains(minimal, old) {
		panic(old)
	}
	return strings.Replace(minimal, old, new, 1)
}

// Every way an event can be rejected, with the exact error: each says what is wrong and where
// (path and byte offset), and matches the sentinel the consumer classifies dead letters by.
var decodeErrorCases = []struct {
	name   string
	in     string
	target error
	want   string
}{
	// Not JSON.
	{"empty message", ``, ErrInvalidJSON, `invalid event: not JSON: empty message`},
	{"truncated at the top", minimal[:40], ErrInvalidJSON,
		`invalid event: not JSON at byte 40 of 40: unexpected end of input: the event is cut off`},
	{"truncated inside a node", minimal[:len(minimal)-3], ErrInvalidJSON,
		`invalid event: not JSON at byte 131 of 131 (in nodes[1]): unexpected end of input: the event is cut off`},
	{"binary garbage", "\x00\xff\x13garbage", ErrInvalidJSON,
		`invalid event: not JSON at byte 0 of 10: invalid character '\x00' at start of value`},
	{"invalid UTF-8", with(`"e1"`, "\"e\xff\""), ErrInvalidJSON,
		`invalid event: not JSON at byte 35 of 134 (in eventId): invalid UTF-8`},
	{"a second value", minimal + "\n{}", ErrInvalidJSON,
		`invalid event: not JSON at byte 135 of 137: "{}" after the event`},
	{"syntax error in an expression", with(`"children":[]`, `"children":[],"exprs":{"condition":[{"class":"Not",}]}`), ErrInvalidJSON,
		`invalid event: not JSON at byte 168 of 175 (in nodes[1].exprs.condition[0]): invalid character ',' at start of value`},

	// Version.
	{"no version", `{"eventId":"e"}`, ErrInvalid, `invalid event: schemaVersion is missing`},
	{"null version", `{"schemaVersion":null,"eventId":"e"}`, ErrInvalid, `invalid event: schemaVersion is missing`},
	{"bad version", `{"schemaVersion":"one"}`, ErrInvalid, `invalid event: schemaVersion "one" is not MAJOR.MINOR`},
	{"signed version", `{"schemaVersion":"+1.-5"}`, ErrInvalid, `invalid event: schemaVersion "+1.-5" is not MAJOR.MINOR`},
	{"three-part version", `{"schemaVersion":"1.0.0"}`, ErrInvalid, `invalid event: schemaVersion "1.0.0" is not MAJOR.MINOR`},
	{"version as a number", `{"schemaVersion":1.0}`, ErrInvalid, `invalid event: schemaVersion at byte 17: want a string, found a number`},
	{"future major version", `{"schemaVersion":"2.0","whatever":[]}`, ErrUnsupportedVersion,
		`unsupported schema version: schemaVersion "2.0", this consumer reads 1.x`},
	{"future major version after a new shape", `{"nodes":5,"schemaVersion":"2.0"}`, ErrUnsupportedVersion,
		`unsupported schema version: schemaVersion "2.0", this consumer reads 1.x`},

	// Strictness.
	{"key in another case", with(`"eventId"`, `"EventId"`), ErrInvalid,
		`invalid event: key "EventId" at byte 23: keys are case-sensitive, the field is "eventId"`},
	{"node key in another case", with(`"children":[1]`, `"Children":[1]`), ErrInvalid,
		`invalid event: nodes[0]: key "Children" at byte 74: keys are case-sensitive, the field is "children"`},
	{"duplicate key", with(`"eventId":"e1"`, `"eventId":"e1","eventId":"e2"`), ErrInvalid,
		`invalid event: duplicate key "eventId" at byte 38`},
	{"duplicate key in a node", with(`"class":"a.Project"`, `"class":"a.Project","class":"b"`), ErrInvalid,
		`invalid event: nodes[1]: duplicate key "class" at byte 118`},
	{"duplicate role", with(`"children":[]`, `"children":[],"exprs":{"a":[],"a":[]}`), ErrInvalid,
		`invalid event: nodes[1].exprs: duplicate key "a" at byte 148`},
	{"duplicate unknown key", with(`"eventId"`, `"x":1,"x":2,"eventId"`), ErrInvalid, `invalid event: duplicate key "x" at byte 29`},
	{"duplicate object", with(`"eventId"`, `"producer":{"name":"a"},"producer":{"name":"b"},"eventId"`), ErrInvalid,
		`invalid event: duplicate key "producer" at byte 47`},
	{"duplicate key in an attribute", with(`"children":[]`, `"children":[],"output":[{"exprId":1,"exprId":2}]`), ErrInvalid,
		`invalid event: nodes[1].output[0]: duplicate key "exprId" at byte 154`},
	{"duplicate key in an argument", with(`"children":[]`, `"children":[],"args":{"a":{"b":1,"b":2}}`), ErrInvalid,
		`invalid event: nodes[1].args.a: duplicate key "b" at byte 151`},
	{"key that folds to a field", with(`"children":[]`, "\"children\":[],\"dataset\":{\"\u212aind\":\"table\"}"), ErrInvalid,
		`invalid event: nodes[1].dataset: key "Kind" at byte 143: keys are case-sensitive, the field is "kind"`},

	// Types.
	{"not an object", `[1,2]`, ErrInvalid, `invalid event: the event at byte 0: want an object, found an array`},
	{"wrong field type", with(`"eventId":"e1"`, `"eventId":12`), ErrInvalid,
		`invalid event: eventId at byte 33: want a string, found a number`},
	{"attribute exprId as a string", with(`"children":[]`, `"children":[],"output":[{"exprId":"7"}]`), ErrInvalid,
		`invalid event: nodes[1].output[0].exprId at byte 152: want an integer, found a string`},
	{"expression exprId as a string", with(`"children":[]`, `"children":[],"exprs":{"a":[{"class":"x","children":[{"exprId":"1"}]}]}`), ErrInvalid,
		`invalid event: nodes[1].exprs.a[0].children[0].exprId at byte 181: want an integer, found a string`},
	{"role that is not a name", with(`"children":[]`, `"children":[],"exprs":{"matched.0.condition":[{"plan":true}]}`), ErrInvalid,
		`invalid event: nodes[1].exprs["matched.0.condition"][0].plan at byte 172: want an integer, found a boolean`},
	{"fractional id", with(`"id":1`, `"id":1.5`), ErrInvalid, `invalid event: nodes[1].id at byte 96: want an integer, found 1.5`},
	{"id out of range", with(`"id":1`, `"id":99999999999999999999`), ErrInvalid,
		`invalid event: nodes[1].id at byte 96: integer 99999999999999999999 out of range`},
	{"child as a string", with(`"children":[]`, `"children":["x"]`), ErrInvalid,
		`invalid event: nodes[1].children[0] at byte 130: want an integer, found a string`},
	{"analyzed marker as a string", with(`"eventId":"e1"`, `"eventId":"e1","markers":{"analyzed":"yes"}`), ErrInvalid,
		`invalid event: markers.analyzed at byte 60: want a boolean, found a string`},
	{"node not an object", with(`{"id":1,"class":"a.Project","children":[]}`, `7`), ErrInvalid,
		`invalid event: nodes[1] at byte 90: want an object, found a number`},

	// Validation.
	{"no event id", `{"schemaVersion":"1.0","nodes":[{"id":0,"class":"x"}]}`, ErrInvalid, `invalid event: eventId is missing`},
	{"no nodes", `{"schemaVersion":"1.0","eventId":"e"}`, ErrInvalid, `invalid event: event e has no plan nodes`},
	{"id mismatch", with(`"id":1`, `"id":7`), ErrInvalid, `invalid event: event e1: node at index 1 has id 7`},
	{"backward child", with(`"children":[]`, `"children":[0]`), ErrInvalid,
		`invalid event: event e1: node 1 (a.Project) child refers to node 0; references must point forward inside nodes[0:2]`},
	{"child out of range", with(`"children":[1]`, `"children":[5]`), ErrInvalid,
		`invalid event: event e1: node 0 (a.Insert) child refers to node 5; references must point forward inside nodes[0:2]`},
	{"subquery plan pointing back", with(`"class":"a.Project",`, `"class":"a.Project","exprs":{"condition":[{"class":"Exists","plan":1}]},`), ErrInvalid,
		`invalid event: event e1: node 1 (a.Project) expression condition refers to node 1; references must point forward inside nodes[0:2]`},
	// 1.5: the scheduler's run and the Spark Connect operation.
	{"a parent without a run id", with(`"eventId":"e1",`, `"eventId":"e1","parent":{"namespace":"airflow","name":"dag.task"},`), ErrInvalid,
		`invalid event: event e1: parent needs a namespace, a name and a runId, has "airflow", "dag.task" and ""`},
	{"a root without a name", with(`"eventId":"e1",`, `"eventId":"e1","parent":{"namespace":"a","name":"d.t","runId":"r1","root":{"namespace":"a","runId":"r0"}},`), ErrInvalid,
		`invalid event: event e1: parent.root needs a namespace, a name and a runId, has "a", "" and "r0"`},
	{"a parent key twice", with(`"eventId":"e1",`, `"eventId":"e1","parent":{"runId":"r1","runId":"r2"},`), ErrInvalid,
		`invalid event: parent: duplicate key "runId" at byte 61`},
	{"a Connect operation without a user", with(`"eventId":"e1",`, `"eventId":"e1","query":{"connect":{"sessionId":"s"}},`), ErrInvalid,
		`invalid event: event e1: query.connect needs a userId and a sessionId`},
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range decodeErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.in))
			if err == nil {
				t.Fatalf("Decode accepted %q", tc.in)
			}
			if !errors.Is(err, tc.target) {
				t.Errorf("Decode error %v does not match %v", err, tc.target)
			}
			if err.Error() != tc.want {
				t.Errorf("Decode error\n got: %s\nwant: %s", err, tc.want)
			}
		})
	}
}

// The 1.5 parts decode into Envelope.Parent (with its root) and Query.Connect; null is none.
func TestDecodeSessionAndParent(t *testing.T) {
	env, err := Decode([]byte(with(`"eventId":"e1",`, `"eventId":"e1","query":{"connect":{"userId":"alice","sessionId":"s","operationId":"o","clientType":"c"}},`+
		`"parent":{"namespace":"airflow","name":"dag.task","runId":"r1","root":{"namespace":"airflow","name":"dag","runId":"r0"}},`)))
	if err != nil {
		t.Fatal(err)
	}
	if c := env.Query.Connect; c == nil || *c != (Connect{UserID: "alice", SessionID: "s", OperationID: "o", ClientType: "c"}) {
		t.Errorf("connect = %+v", c)
	}
	if p := env.Parent; p == nil || p.RunID != "r1" || p.Root == nil || p.Root.Name != "dag" || p.Root.Root != nil {
		t.Errorf("parent = %+v", p)
	}
	env, err = Decode([]byte(with(`"eventId":"e1",`, `"eventId":"e1","query":{"connect":null},"parent":null,`)))
	if err != nil || env.Parent != nil || env.Query.Connect != nil {
		t.Errorf("null parent and connect: %v, %+v, %+v", err, env.Parent, env.Query.Connect)
	}
}

func TestDecodeMinimal(t *testing.T) {
	env, err := Decode([]byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if len(env.Nodes) != 2 || env.Nodes[0].Children[0] != 1 {
		t.Errorf("decoded %+v", env)
	}
}

// What a minor version may add is skipped; null means absent.
var lenientCases = map[string]string{
	"unknown top-level key":    with(`"eventId"`, `"futureField":{"a":[1,{"b":null}]},"eventId"`),
	"unknown node key":         with(`"children":[1]`, `"children":[1],"stats":{"rows":3}`),
	"nulls":                    with(`"children":[]`, `"children":[],"output":null,"exprs":null,"dataset":null,"write":null,"ddl":null`),
	"escaped key":              with(`"eventId"`, `"event\u0049d"`),
	"white space around":       " \n" + minimal + "\n\t ",
	"minor version from later": with(`"1.0"`, `"1.99"`),
}

func TestDecodeLenient(t *testing.T) {
	for name, in := range lenientCases {
		if _, err := Decode([]byte(in)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestDeepNestingIsAnErrorNotAPanic(t *testing.T) {
	deep := `{"schemaVersion":"1.0","eventId":"e","nodes":[{"id":0,"class":"x","exprs":{"e":[` +
		strings.Repeat(`{"class":"Not","children":[`, 20000) + strings.Repeat(`]}`, 20000) + `]}}]}`
	if _, err := Decode([]byte(deep)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Decode of 20000 nested expressions = %v, want an ErrInvalid", err)
	}
}

// Equal string arrays of one event are one slice with its exact capacity (an append copies);
// different contents, an empty array and null stay apart.
func TestDecodeSharesStringArrays(t *testing.T) {
	in := with(`{"id":1,"class":"a.Project","children":[]}`, `{"id":1,"class":"a.Project","children":[],"output":[`+
		`{"exprId":1,"name":"a","type":"int","nullable":true,"qualifier":["c","db","t"]},`+
		`{"exprId":2,"name":"b","type":"int","nullable":true,"qualifier":["c","db","t"]},`+
		`{"exprId":3,"name":"c","type":"int","nullable":true,"qualifier":["c","dbt"]},`+
		`{"exprId":4,"name":"d","type":"int","nullable":true,"qualifier":["c","db","t\u0000"]},`+
		`{"exprId":5,"name":"e","type":"int","nullable":true,"qualifier":[]},`+
		`{"exprId":6,"name":"f","type":"int","nullable":true,"qualifier":[]},`+
		`{"exprId":7,"name":"g","type":"int","nullable":true,"qualifier":null},`+
		`{"exprId":8,"name":"h","type":"int","nullable":true,"qualifier":["c","d\u0062","t"]}]}`)
	env, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out := env.Nodes[1].Output
	q := func(i int) []string { return out[i].Qualifier }
	if &q(0)[0] != &q(1)[0] || &q(0)[0] != &q(7)[0] || cap(q(0)) != 3 || strings.Join(q(0), "|") != "c|db|t" {
		t.Errorf("equal qualifiers: %q at %p (cap %d), %p and %p (escaped), want one slice of capacity 3", q(0), q(0), cap(q(0)), q(1), q(7))
	}
	if strings.Join(q(2), "|") != "c|dbt" || strings.Join(q(3), "|") != "c|db|t\x00" || &q(3)[0] == &q(0)[0] {
		t.Errorf("different qualifiers: %q, %q", q(2), q(3))
	}
	if q(4) == nil || len(q(4)) != 0 || q(5) == nil || q(6) != nil {
		t.Errorf("empty and null qualifiers: %#v, %#v, %#v", q(4), q(5), q(6))
	}
}
