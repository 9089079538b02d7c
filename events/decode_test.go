package events

import (
	"errors"
	"strings"
	"testing"
)

const minimal = `{"schemaVersion":"1.0","eventId":"e1","nodes":[` +
	`{"id":0,"class":"a.Insert","children":[1]},{"id":1,"class":"a.Project","children":[]}]}`

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		target  error
		message string
	}{
		{"empty message", ``, ErrInvalidJSON, "empty message"},
		{"truncated JSON", minimal[:40], ErrInvalidJSON, "not JSON at byte 40 of 40: unexpected end"},
		{"binary garbage", "\x00\xff\x13garbage", ErrInvalidJSON, "at byte"},
		{"not an object", `[1,2]`, ErrInvalid, "cannot unmarshal array"},
		{"no version", `{"eventId":"e"}`, ErrInvalid, "schemaVersion is missing"},
		{"bad version", `{"schemaVersion":"one"}`, ErrInvalid, `"one" is not MAJOR.MINOR`},
		{"future major version", `{"schemaVersion":"2.0","whatever":[]}`, ErrUnsupportedVersion, `"2.0", this consumer reads 1.x`},
		{"no event id", `{"schemaVersion":"1.0","nodes":[{"id":0,"class":"x"}]}`, ErrInvalid, "eventId is missing"},
		{"no nodes", `{"schemaVersion":"1.0","eventId":"e"}`, ErrInvalid, "has no plan nodes"},
		{"id mismatch", strings.Replace(minimal, `"id":1`, `"id":7`, 1), ErrInvalid, "node at index 1 has id 7"},
		{"backward child", strings.Replace(minimal, `"children":[]`, `"children":[0]`, 1), ErrInvalid, "refers to node 0"},
		{"child out of range", strings.Replace(minimal, `"children":[1]`, `"children":[5]`, 1), ErrInvalid, "refers to node 5"},
		{"wrong field type", strings.Replace(minimal, `"eventId":"e1"`, `"eventId":12`, 1), ErrInvalid, "eventId"},
		{"subquery plan pointing back", strings.Replace(minimal, `"class":"a.Project",`,
			`"class":"a.Project","exprs":{"condition":[{"class":"Exists","plan":1}]},`, 1), ErrInvalid, "expression condition refers to node 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.in))
			if !errors.Is(err, tc.target) {
				t.Fatalf("Decode error = %v, want %v", err, tc.target)
			}
			if !strings.Contains(err.Error(), tc.message) {
				t.Errorf("error %q does not say %q", err, tc.message)
			}
		})
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

func TestDeepNestingIsAnErrorNotAPanic(t *testing.T) {
	deep := `{"schemaVersion":"1.0","eventId":"e","nodes":[{"id":0,"class":"x","exprs":{"e":[` +
		strings.Repeat(`{"class":"Not","children":[`, 20000) + strings.Repeat(`]}`, 20000) + `]}}]}`
	if _, err := Decode([]byte(deep)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Decode of 20000 nested expressions = %v, want an ErrInvalid", err)
	}
}
