package colline_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// mustNot is the "must not import" column of docs/development.md (Packages): a package must not
// import these, directly or indirectly. Names without a dot are the module's packages.
var mustNot = map[string][]string{
	"events":      {"plan", "graph", "process", "ingest", "admin", "config", "cli", "e2e/stack"},
	"plan":        {"graph", "process", "ingest", "admin", "config", "cli", "e2e/stack", "github.com/segmentio/kafka-go", "github.com/neo4j/neo4j-go-driver"},
	"graph":       {"process", "ingest", "admin", "config", "cli", "e2e/stack", "github.com/segmentio/kafka-go"},
	"process":     {"ingest", "admin", "config", "cli", "e2e/stack", "github.com/segmentio/kafka-go"},
	"ingest":      {"admin", "config", "cli", "cmd/", "e2e/stack"},
	"admin":       {"events", "plan", "graph", "process", "ingest", "config", "cli", "e2e/stack"},
	"config":      {"events", "plan", "graph", "process", "ingest", "admin", "cli", "e2e/stack", "ui", "browser"},
	"cli":         {"ingest", "admin", "e2e/stack"},
	"e2e/stack":   {"events", "plan", "graph", "process", "ingest", "admin", "config", "cli", "ui", "browser"},
	"ui":          {"ingest", "admin", "config", "cli", "e2e/stack", "github.com/segmentio/kafka-go"},
	"browser":     {"events", "plan", "graph", "process", "ingest", "admin", "config", "cli", "ui", "e2e/stack"},
	"retention":   {"process", "ingest", "admin", "config", "cli", "e2e/stack", "github.com/segmentio/kafka-go"},
	"openlineage": {"graph", "process", "ingest", "intake", "emit", "admin", "config", "cli", "e2e/stack", "github.com/segmentio/kafka-go", "github.com/neo4j/neo4j-go-driver"},
	"intake":      {"ingest", "emit", "admin", "config", "cli", "e2e/stack"},
	"analyze":     {"graph", "process", "ingest", "admin", "config", "cli", "e2e/stack", "github.com/segmentio/kafka-go", "github.com/neo4j/neo4j-go-driver"},
	"impact":      {"graph", "process", "ingest", "admin", "config", "cli", "e2e/stack", "github.com/segmentio/kafka-go", "github.com/neo4j/neo4j-go-driver"},
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
				t.Errorf("%s imports %s (directly or not); docs/development.md says it must not", pkg, deps[i])
			}
		}
	}
}
