package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo is the repository root, relative to this package.
const repo = ".."

// tool returns the path of a tool fetched by deploy/tools.sh. Without it the test is skipped,
// unless COLLINE_TOOLS_REQUIRED is set (make chart-test sets it): then it fails.
func tool(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("COLLINE_TOOLS_BIN")
	if dir == "" {
		dir = filepath.Join(repo, ".cache", "bin")
	}
	p, err := filepath.Abs(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("COLLINE_TOOLS_REQUIRED") != "" {
			t.Fatalf("%s is missing: run deploy/tools.sh", p)
		}
		t.Skipf("%s is missing: run deploy/tools.sh (or make chart-test)", p)
	}
	return p
}

// schemaDir returns the Kubernetes JSON schemas fetched by deploy/tools.sh.
func schemaDir(t *testing.T) string {
	t.Helper()
	kc := tool(t, "kubeconform")
	dir := filepath.Join(filepath.Dir(kc), "..", "tools", "k8s-schemas")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("no Kubernetes schemas in %s: run deploy/tools.sh", dir)
	}
	abs, _ := filepath.Abs(dir)
	return abs
}

// run runs a command and returns its stdout; stderr is returned in the error.
func run(t *testing.T, stdin []byte, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String(), &cmdError{err: err, stderr: strings.TrimSpace(errb.String() + "\n" + out.String())}
	}
	return out.String(), nil
}

type cmdError struct {
	err    error
	stderr string
}

func (e *cmdError) Error() string { return e.err.Error() + ": " + e.stderr }
