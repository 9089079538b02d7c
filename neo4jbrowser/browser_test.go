package neo4jbrowser

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"
)

func TestQueries(t *testing.T) {
	qs := Queries()
	if len(qs) != 14 {
		t.Fatalf("%d queries, want the 14 of docs/browser.md", len(qs))
	}
	for _, q := range qs {
		if q.Title == "" || !strings.Contains(q.Text, "MATCH") {
			t.Errorf("%s: title %q, text %q", q.Name, q.Title, q.Text)
		}
		for _, p := range q.Params {
			if !regexp.MustCompile(`^:param [a-zA-Z]+ => .+$`).MatchString(p) {
				t.Errorf("%s: parameter line %q is not a Browser :param command", q.Name, p)
			}
		}
	}
}

// TestGuide: every query is a runnable step of the guide, exactly as shipped once unescaped, with
// its example parameters; the style and the explorer are linked at the base given.
func TestGuide(t *testing.T) {
	var b bytes.Buffer
	if err := Guide(&b, "http://ui.example:7480"); err != nil {
		t.Fatal(err)
	}
	g := b.String()
	steps := regexp.MustCompile(`(?s)<pre class="runnable" data-query="([^"]+)">(.*?)</pre>`).FindAllStringSubmatch(g, -1)
	got := map[string]string{}
	for _, s := range steps {
		got[s[1]] = html.UnescapeString(s[2])
	}
	for _, q := range Queries() {
		if got[q.Name] != q.Text {
			t.Errorf("guide step %s:\n%s\nwant\n%s", q.Name, got[q.Name], q.Text)
		}
		for _, p := range q.Params {
			if !strings.Contains(g, `<pre class="runnable">`+html.EscapeString(p)+`</pre>`) {
				t.Errorf("guide lacks the runnable parameter %q", p)
			}
		}
	}
	if strings.Count(g, "<slide") != len(Queries())+1 {
		t.Errorf("%d slides, want one per query and an introduction", strings.Count(g, "<slide"))
	}
	for _, want := range []string{`:style http://ui.example:7480/neo4j/colline.grass`, `href="http://ui.example:7480/"`} {
		if !strings.Contains(g, want) {
			t.Errorf("guide lacks %s", want)
		}
	}
}

// TestStyle parses the GraSS the way Neo4j Browser's parser does (rules of "selector { key:
// value; }", values split at the first and only colon, quotes dropped): every rule colline needs
// is there, and no value is lost to a second colon or to a comment, which that parser cannot read.
func TestStyle(t *testing.T) {
	s := string(Style())
	if strings.Contains(s, "/*") || strings.Contains(s, "//") {
		t.Error("the style has a comment; Neo4j Browser's GraSS parser would read it as a selector")
	}
	rules := map[string]map[string]string{}
	for _, m := range regexp.MustCompile(`(?s)([a-zA-Z_.]+)\s*\{(.*?)\}\s*(?:\n|$)`).FindAllStringSubmatch(s, -1) {
		props := map[string]string{}
		for _, decl := range strings.Split(m[2], ";") {
			if strings.TrimSpace(decl) == "" {
				continue
			}
			kv := strings.Split(decl, ":")
			if len(kv) != 2 {
				t.Errorf("%s: %q has %d colons; Browser drops it", m[1], strings.TrimSpace(decl), len(kv)-1)
				continue
			}
			props[strings.TrimSpace(kv[0])] = strings.Trim(strings.TrimSpace(kv[1]), "'")
		}
		rules[m[1]] = props
	}
	for sel, want := range map[string]map[string]string{
		"node.Column":               {"caption": "{table}.{name}"},
		"node.Dataset":              {"caption": "{name}"},
		"node.Job":                  {"caption": "{name}"},
		"relationship.FEEDS":        {"caption": "{type} {subtype}", "shaft-width": "4px"},
		"relationship.DECIDES_ROWS": {"caption": "{roles}", "shaft-width": "1px"},
	} {
		for k, v := range want {
			if rules[sel][k] != v {
				t.Errorf("%s %s = %q, want %q", sel, k, rules[sel][k], v)
			}
		}
	}
	colour := func(sel string) string { return rules[sel]["color"] }
	if colour("node.Column") == colour("node.Dataset") || colour("node.Dataset") == colour("node.Job") || colour("relationship.FEEDS") == colour("relationship.DECIDES_ROWS") {
		t.Errorf("colours do not tell apart columns, datasets, jobs, FEEDS and DECIDES_ROWS: %v", rules)
	}
}
