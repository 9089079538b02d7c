package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colline/colline/plan/hostile"
)

// hostileName has what must never reach a terminal or a renderer raw: a newline, a tab, a
// carriage return, ESC (a colour sequence), a bidirectional override, invalid UTF-8, and the
// quote, bar and hash that end or mark up DOT and Mermaid labels.
const hostileName = "a\nb\tc\rd\x1b[31me\u202ef\xff\"g|h#quot;<i>"

// TestExplainEscapesNames renames a column of the captured skeleton run (a MUTATION, in the
// decoded lineage: a listener would pass any name Spark accepts, and Spark accepts these quoted)
// and checks every format: no control character besides the line ends, as many lines as with the
// original name, and JSON that gives the name back (invalid UTF-8 becomes U+FFFD, as encoding/json does).
func TestExplainEscapesNames(t *testing.T) {
	evs, err := Load([]string{skeleton})
	if err != nil {
		t.Fatal(err)
	}
	render := func(format string) string {
		var b bytes.Buffer
		if err := Write(&b, format, evs); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	before := map[string]string{}
	for _, f := range Formats {
		before[f] = render(f)
	}
	// rename one written column everywhere it appears: its dataset and its edges
	w := &evs[len(evs)-1].Lineage.Writes[0]
	old := w.Columns[0].Key
	nk := w.Key + "#" + hostileName
	w.Columns[0].Name, w.Columns[0].Key = hostileName, nk
	for _, ev := range evs {
		for k := range ev.Lineage.Edges {
			e := &ev.Lineage.Edges[k]
			if e.Target == old {
				e.Target = nk
				e.Transformations[0].Expr = hostileName
			}
			if e.Source == old {
				e.Source = nk
			}
		}
	}
	for _, f := range Formats {
		out := render(f)
		if out == before[f] {
			t.Errorf("%s: the renamed column does not appear", f)
		}
		for i, r := range out {
			if r < 0x20 && r != '\n' || r == 0x7f || r == '\u202e' || r == '\uFFFD' && f != "json" {
				t.Errorf("%s: raw %U at byte %d", f, r, i)
				break
			}
		}
		if got, want := strings.Count(out, "\n"), strings.Count(before[f], "\n"); got != want && f != "json" {
			t.Errorf("%s: %d lines, %d with the original name: a name broke a line", f, got, want)
		}
		switch f {
		case "json":
			if !strings.Contains(out, `"a\nb\tc\rd\u001b[31me`) {
				t.Errorf("json: the name is not JSON-escaped")
			}
			var v []jsonEvent
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Errorf("json: %v", err)
			} else if w := v[len(v)-1].Writes[0]; w.Columns[0] != strings.ToValidUTF8(hostileName, "\uFFFD") {
				t.Errorf("json: the name decodes as %q", w.Columns[0])
			}
		case "mermaid":
			if strings.Contains(out, `"g|h`) || strings.Contains(out, `#quot;<i>`) {
				t.Errorf("mermaid: a quote, bar, hash or bracket is not escaped")
			}
		case "dot":
			if !strings.Contains(out, `label="a\\nb\\tc\\rd\\x1b[31me\\u202ef\\xff\"g|h#quot;<i>"`) {
				t.Errorf("dot: the label is not escaped as expected:\n%s", out)
			}
		}
	}
}

// TestExplainStopsOnCancel: Ctrl-C (the context ending) stops explain while an event of a
// hostile shape (a MUTATED captured event, plan/hostile) is being extracted.
func TestExplainStopsOnCancel(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("..", "plan", "testdata", hostile.Base))
	if err != nil {
		t.Fatal(err)
	}
	data, err := hostile.Make(base, hostile.WideFilter, 12000) // about 2 s of extraction on this machine
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "wide.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	var out, errOut bytes.Buffer
	code := Main(ctx, "test", []string{"explain", file}, &out, &errOut)
	if took := time.Since(start); code != 1 || took > time.Second || !strings.Contains(errOut.String(), "interrupted") {
		t.Errorf("exit %d after %v: %s; want 1 within a second, interrupted", code, took, errOut.String())
	}
}

// TestExplainOverBudget: a plan over an extraction budget (the paths shape, a MUTATED captured
// event) is explained with its table-level lineage and says which budget, in text and JSON.
func TestExplainOverBudget(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("..", "plan", "testdata", hostile.Base))
	if err != nil {
		t.Fatal(err)
	}
	data, err := hostile.Make(base, hostile.Paths, 40) // 136,000 edges and roles: over the default 10,000
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "paths.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := Main(context.Background(), "test", []string{"explain", file}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if s := out.String(); !strings.Contains(s, "(column lineage missing: the plan is over an extraction budget (plan too complex: lineage edges and roles more than 10000, the edges budget is 10000") ||
		!strings.Contains(s, "column lineage missing)") {
		t.Errorf("text:\n%s", s)
	}
	out.Reset()
	if code := Main(context.Background(), "test", []string{"explain", "--format", "json", file}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var v []jsonEvent
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || len(v) != 1 || v[0].OverBudget != "edges" || len(v[0].Writes) == 0 ||
		v[0].Writes[0].ColumnLineage != nil || !strings.Contains(v[0].Writes[0].ColumnLineageMissing, "the edges budget") {
		t.Errorf("json: %v %s", err, out.String())
	}
}
