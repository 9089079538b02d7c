package main

import (
	"strings"
	"testing"
)

func TestParseOverhead(t *testing.T) {
	out := `warm-up: 16 queries in 12.0s
colline stats: {built=20}
tpcds-row none 20 250.100 700.000 0.000 0.000 0.000
tpcds-row colline 10 260.000 720.500 4.250 9.000 51.500
tpcds-row openlineage 10 270.000 800.000 120.000 900.000 1500.000
colline-stats built=10 droppedNested=10 published=10
`
	var echoed int
	rows, stats, err := parseOverhead(strings.NewReader(out), func(string) { echoed++ })
	if err != nil {
		t.Fatal(err)
	}
	if echoed != 6 {
		t.Errorf("echoed %d lines, want 6", echoed)
	}
	c := rows["colline"]
	if c == nil || c.queries != 10 || c.listenerP50 != 4.25 || c.listenerP99 != 9 || c.wallP99 != 720.5 || c.listenerSum != 51.5 {
		t.Errorf("colline row = %+v", c)
	}
	if rows["openlineage"] == nil || rows["openlineage"].listenerP50 != 120 || rows["none"].queries != 20 {
		t.Errorf("rows = %v", rows)
	}
	if stats != "built=10 droppedNested=10 published=10" {
		t.Errorf("stats = %q", stats)
	}
	if _, _, err := parseOverhead(strings.NewReader("tpcds-row colline x 1 2 3 4 5\n"), func(string) {}); err == nil {
		t.Error("a malformed tpcds-row parsed without an error")
	}
}
