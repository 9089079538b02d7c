package graph

import (
	"testing"
)

func TestCompare(t *testing.T) {
	e := func(s, t string) EdgeRow {
		return EdgeRow{Kind: "FEEDS", Source: s, Target: t, Job: "j", Roles: []string{"DIRECT/IDENTITY"}}
	}
	counts := func(cols, feeds int64) Counts {
		return Counts{Nodes: map[string]int64{"Column": cols}, Relationships: map[string]int64{"FEEDS": feeds}}
	}
	for _, tc := range []struct {
		name      string
		want, got []EdgeRow
		wc, gc    Counts
		equal     bool
		account   string
	}{
		{"same", []EdgeRow{e("a", "b")}, []EdgeRow{e("a", "b")}, counts(2, 1), counts(2, 1), true,
			"edges expected 1, found 1 (distinct 1, missing 0, unexpected 0, duplicated 0); found/expected: Column 2/2, FEEDS 1/1"},
		{"missing", []EdgeRow{e("a", "b"), e("a", "c")}, []EdgeRow{e("a", "b")}, counts(3, 2), counts(3, 1), false,
			`edges expected 2, found 1 (distinct 1, missing 1, unexpected 0, duplicated 0); found/expected: Column 3/3, FEEDS 1/2; missing: ["a -FEEDS-> c [j] DIRECT/IDENTITY"]; counts: ["relationships FEEDS: expected 2, found 1"]`},
		{"unexpected and duplicated", []EdgeRow{e("a", "b")}, []EdgeRow{e("a", "b"), e("a", "b"), e("x", "y")}, counts(2, 1), counts(2, 1), false,
			`edges expected 1, found 3 (distinct 2, missing 0, unexpected 1, duplicated 1); found/expected: Column 2/2, FEEDS 1/1; unexpected: ["x -FEEDS-> y [j] DIRECT/IDENTITY"]; duplicated: ["a -FEEDS-> b [j] DIRECT/IDENTITY x2"]`},
		{"a label only found", nil, nil, counts(1, 0), Counts{Nodes: map[string]int64{"Column": 1, "Run": 2}}, false,
			`edges expected 0, found 0 (distinct 0, missing 0, unexpected 0, duplicated 0); found/expected: Column 1/1, Run 2/0, FEEDS 0/0; counts: ["nodes Run: expected 0, found 2"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(tc.wc, tc.want, tc.gc, tc.got)
			if d.Equal() != tc.equal {
				t.Errorf("Equal() = %v, want %v", d.Equal(), tc.equal)
			}
			if got := d.String(); got != tc.account {
				t.Errorf("String():\n got %s\nwant %s", got, tc.account)
			}
		})
	}
}
