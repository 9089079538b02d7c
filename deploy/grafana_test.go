package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

const dashboardFile = "grafana/colline.json"

type panel struct {
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	GridPos struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

type dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

// grafanaVars stand in for the dashboard's variables, so that its queries parse as PromQL.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$__range", "1h", "$job", ".*", "$namespace", ".*")

// TestDashboard: the dashboard is valid JSON, its panels are well placed, every query parses as
// PromQL and uses only metrics and labels the consumer exports, and it covers what operators need.
func TestDashboard(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.UID == "" || d.Title == "" {
		t.Errorf("uid %q title %q", d.UID, d.Title)
	}
	var all []panel
	for _, p := range d.Panels {
		all = append(all, p)
		all = append(all, p.Panels...)
	}
	ids := map[int]bool{}
	var exprs []string
	for _, p := range all {
		if ids[p.ID] {
			t.Errorf("panel id %d used twice", p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.W <= 0 || p.GridPos.X+p.GridPos.W > 24 || p.GridPos.H <= 0 {
			t.Errorf("panel %q: gridPos %+v outside the 24-column grid", p.Title, p.GridPos)
		}
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for i, tg := range p.Targets {
			checkPromQL(t, fmt.Sprintf("panel %q query %d", p.Title, i), grafanaVars.Replace(tg.Expr))
			exprs = append(exprs, tg.Expr)
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((\w+)(\{.*\})?, *(\w+)\)$`)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		m := labelValues.FindStringSubmatch(v.Definition)
		if m == nil {
			t.Errorf("variable %s: %q is not label_values(metric, label)", v.Name, v.Definition)
			continue
		}
		checkPromQL(t, "variable "+v.Name, grafanaVars.Replace(m[1]+m[2]))
	}
	joined := strings.Join(exprs, "\n")
	for what, re := range map[string]string{
		"throughput":             `colline_ingest_messages_total`,
		"lag":                    `colline_ingest_lag_records`,
		"event age":              `colline_ingest_event_age_seconds_bucket`,
		"dead letters by reason": `sum by \(reason\) \(increase\(colline_ingest_dead_letters_total`,
		"unknown node classes":   `colline_plan_unknown_nodes_total`,
		"Neo4j write latency":    `colline_ingest_stage_duration_seconds_bucket\{[^}]*stage="write"`,
		"Neo4j write retries":    `colline_ingest_retries_total`,
	} {
		if !regexp.MustCompile(re).MatchString(joined) {
			t.Errorf("no panel shows %s (%s)", what, re)
		}
	}
}
