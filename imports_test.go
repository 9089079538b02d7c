package colline_test

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated sections of docs/architecture.md")

// architecture is the page of the package map and the import rules, both generated here.
const architecture = "docs/architecture.md"

// mustNot are the import rules (docs/architecture.md, "Import rules", generated from this table): a
// package must not import these, directly or indirectly. Names without a dot are the module's
// packages.
var mustNot = map[string][]string{
	"events":             {"plan", "graph", "process", "ingest", "admin", "config", "cli", "e2e/stack"},
	"plan":               {"graph", "process", "ingest", "admin", "config", "cli", "e2e/stack", "github.com/segmentio/kafka-go", "github.com/neo4j/neo4j-go-driver"},
	"graph":              {"process", "ingest", "admin", "config", "cli", "e2e/stack", "github.com/segmentio/kafka-go"},
	"kafkaconn":          {"events", "plan", "record", "graph", "process", "ingest", "admin", "config", "cli", "e2e/stack", "github.com/neo4j/neo4j-go-driver"},
	"record":             {"graph", "process", "ingest", "admin", "config", "cli", "e2e/stack", "github.com/segmentio/kafka-go", "github.com/neo4j/neo4j-go-driver"},
	"process":            {"graph", "ingest", "admin", "config", "cli", "e2e/stack", "github.com/segmentio/kafka-go", "github.com/neo4j/neo4j-go-driver"},
	"ingest":             {"admin", "config", "cli", "cmd/", "e2e/stack"},
	"admin":              {"events", "plan", "graph", "process", "ingest", "config", "cli", "e2e/stack", "ui", "openlineage/intake"},
	"guard":              {"events", "plan", "graph", "process", "ingest", "admin", "config", "cli", "e2e/stack", "ui", "openlineage/intake", "github.com/segmentio/kafka-go", "github.com/neo4j/neo4j-go-driver"},
	"config":             {"events", "plan", "graph", "process", "ingest", "admin", "cli", "e2e/stack", "ui", "neo4jbrowser"},
	"cli":                {"ingest", "admin", "e2e/stack"},
	"e2e/stack":          {"events", "plan", "graph", "process", "ingest", "admin", "config", "cli", "ui", "neo4jbrowser"},
	"ui":                 {"ingest", "admin", "config", "cli", "e2e/stack", "github.com/segmentio/kafka-go"},
	"neo4jbrowser":       {"events", "plan", "graph", "process", "ingest", "admin", "config", "cli", "ui", "e2e/stack"},
	"retention":          {"process", "ingest", "admin", "config", "cli", "e2e/stack", "github.com/segmentio/kafka-go"},
	"plan/hostile":       {"graph", "process", "ingest", "admin", "config", "cli", "e2e/stack", "github.com/segmentio/kafka-go", "github.com/neo4j/neo4j-go-driver"},
	"openlineage":        {"graph", "process", "ingest", "openlineage/intake", "openlineage/emit", "admin", "config", "cli", "e2e/stack", "github.com/segmentio/kafka-go", "github.com/neo4j/neo4j-go-driver"},
	"openlineage/intake": {"ingest", "openlineage/emit", "admin", "config", "cli", "e2e/stack"},
	"openlineage/emit":   {"graph", "process", "ingest", "openlineage/intake", "admin", "config", "cli", "e2e/stack", "github.com/neo4j/neo4j-go-driver"},
	"analyze":            {"graph", "process", "ingest", "admin", "config", "cli", "e2e/stack", "github.com/segmentio/kafka-go", "github.com/neo4j/neo4j-go-driver"},
	"impact":             {"graph", "process", "ingest", "admin", "config", "cli", "e2e/stack", "github.com/segmentio/kafka-go", "github.com/neo4j/neo4j-go-driver"},
	"tags/watch":         {"graph", "process", "ingest", "openlineage", "admin", "config", "cli", "ui", "e2e/stack", "github.com/segmentio/kafka-go", "github.com/neo4j/neo4j-go-driver"},
	"tags":               {"graph", "record", "process", "ingest", "openlineage", "admin", "config", "cli", "ui", "e2e/stack", "github.com/segmentio/kafka-go", "github.com/neo4j/neo4j-go-driver"},
}

func TestPackageImports(t *testing.T) {
	const module = "github.com/colline/colline/"
	for pkg, banned := range mustNot {
		out, err := exec.Command("go", "list", "-deps", module+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		for _, b := range banned {
			if !strings.Contains(b, ".") {
				b = module + b // one of the module's packages
			}
			i := slices.IndexFunc(deps, func(d string) bool {
				return d == b || strings.HasPrefix(d, strings.TrimSuffix(b, "/")+"/")
			})
			if i >= 0 {
				t.Errorf("%s imports %s (directly or not); docs/architecture.md says it must not", pkg, deps[i])
			}
		}
	}
}

// TestPackageGraph fails when the package map of docs/architecture.md is not the one `go list`
// gives (Mermaid): the module's packages and their imports, tests left out. Refresh it with:
// go test . -run TestPackageGraph -update
func TestPackageGraph(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	generated(t, "packages", Mermaid(string(out)))
}

// TestPackageRules fails when the import rules of docs/architecture.md are not mustNot. Refresh
// them with: go test . -run TestPackageRules -update
func TestPackageRules(t *testing.T) {
	var b strings.Builder
	b.WriteString("| package | must not import (directly or through another package) |\n|---|---|\n")
	for _, pkg := range slices.Sorted(maps.Keys(mustNot)) {
		names := make([]string, len(mustNot[pkg]))
		for i, n := range mustNot[pkg] {
			names[i] = "`" + strings.TrimSuffix(n, "/") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", pkg, strings.Join(names, ", "))
	}
	generated(t, "rules", b.String())
}

// generated fails when the section name of docs/architecture.md (between its BEGIN and END
// GENERATED markers) is not body; with -update it writes body there.
func generated(t *testing.T, name, body string) {
	t.Helper()
	doc, err := os.ReadFile(architecture)
	if err != nil {
		t.Fatal(err)
	}
	got := string(doc)
	begin, end := "<!-- BEGIN GENERATED "+name+" -->\n", "<!-- END GENERATED "+name+" -->"
	i, j := strings.Index(got, begin), strings.Index(got, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the markers %q and %q", architecture, strings.TrimSpace(begin), end)
	}
	if got[i+len(begin):j] == body {
		return
	}
	if !*update {
		t.Fatalf("the %s section of %s is out of date; run: go test . -run %s -update\nwant:\n%s", name, architecture, t.Name(), body)
	}
	if err := os.WriteFile(architecture, []byte(got[:i+len(begin)]+body+got[j:]), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Mermaid draws the output of `go list -f '{{.ImportPath}}{{range .Imports}} {{.}}{{end}}'` as a
// Mermaid flowchart of the module's packages, from the binaries down to the packages that import
// none: an arrow from each to the packages it imports, but for those it also reaches through
// another arrow (the transitive reduction), which would only make the picture harder to read.
func Mermaid(golist string) string {
	const module = "github.com/colline/colline"
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(golist), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] == module {
			continue // the root holds only tests
		}
		pkg := strings.TrimPrefix(f[0], module+"/")
		imports[pkg] = []string{}
		for _, d := range f[1:] {
			if strings.HasPrefix(d, module+"/") {
				imports[pkg] = append(imports[pkg], strings.TrimPrefix(d, module+"/"))
			}
		}
	}
	// height: the longest chain of imports below a package; higher ones are drawn first
	height := map[string]int{}
	var h func(string) int
	h = func(p string) int {
		if v, ok := height[p]; ok {
			return v
		}
		v := 0
		for _, d := range imports[p] {
			v = max(v, h(d)+1)
		}
		height[p] = v
		return v
	}
	pkgs := make([]string, 0, len(imports))
	for p := range imports {
		pkgs = append(pkgs, p)
		h(p)
	}
	order := func(a, b string) int {
		if height[a] != height[b] {
			return height[b] - height[a]
		}
		return strings.Compare(a, b)
	}
	slices.SortFunc(pkgs, order)
	var reaches func(from, to string) bool // through imports
	reaches = func(from, to string) bool {
		return slices.ContainsFunc(imports[from], func(d string) bool { return d == to || reaches(d, to) })
	}
	// ids of their own: a package name such as graph is a Mermaid keyword
	id := func(p string) string { return "p_" + strings.NewReplacer("/", "_", ".", "_").Replace(p) }
	var b strings.Builder
	b.WriteString("```mermaid\nflowchart TD\n")
	for _, p := range pkgs {
		fmt.Fprintf(&b, "  %s[\"%s\"]\n", id(p), p)
	}
	for _, p := range pkgs {
		var deps []string
		for _, d := range imports[p] {
			if !slices.ContainsFunc(imports[p], func(via string) bool { return via != d && reaches(via, d) }) {
				deps = append(deps, d)
			}
		}
		if len(deps) == 0 {
			continue
		}
		slices.SortFunc(deps, order)
		for i, d := range deps {
			deps[i] = id(d)
		}
		fmt.Fprintf(&b, "  %s --> %s\n", id(p), strings.Join(deps, " & "))
	}
	b.WriteString("```\n")
	return b.String()
}
