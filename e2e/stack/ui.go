package stack

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// UI is a running `colline ui`, the lineage explorer.
type UI struct {
	URL     string // where it serves, http(s)://host:port, from its first line
	LogFile string // its standard error
	Line    string // its first line
}

var servingLine = regexp.MustCompile(`serving (https?://\S+)/ `)

// StartUI runs bin ui on a free port of 127.0.0.1 with Environ and env (later ones win), its
// standard error in logFile, and returns once its first line says where it serves. It is
// stopped when t ends; the log is shown if t failed.
func StartUI(t testing.TB, bin, logFile string, env ...string) *UI {
	t.Helper()
	cmd := exec.Command(bin, "ui", "--addr", "127.0.0.1:0")
	cmd.Env = append(append(Environ(), "COLLINE_LOG_FORMAT=text"), env...)
	f, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = f
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		f.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logFile)
			t.Logf("colline ui log %s:\n%s", logFile, b)
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("colline ui said nothing: %v", err)
	}
	m := servingLine.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("colline ui: %q names no address", line)
	}
	return &UI{URL: m[1], LogFile: logFile, Line: strings.TrimSpace(line)}
}

// Logs returns what the explorer has logged so far.
func (u *UI) Logs() string {
	b, _ := os.ReadFile(u.LogFile)
	return string(b)
}
