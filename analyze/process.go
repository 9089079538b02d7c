package analyze

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options say how to start an analyzer (dev/spark-analyze --help has the details).
type Options struct {
	Launcher  string    // the launcher; default: FindLauncher
	SparkLine string    // SPARK_LINE of the launcher (a line of dev/spark/lines); empty: its default, 3.5_2.12
	Catalog   string    // the analyzer's own catalog: memory (default) or hive
	Metastore string    // analyze against this Hive metastore instead (read only): a directory holding metastore_db, a JDBC URL or thrift://
	Warehouse string    // spark.sql.warehouse.dir
	TokenFile string    // the bearer token's file (created, 0600, when missing); empty: a fresh token in a private temporary file
	Args      []string  // more launcher arguments (--ddl FILE, -Dspark.k=v)
	Log       io.Writer // the analyzer's output; nil: kept only for errors
}

// ReadyPrefix starts the line the analyzer prints once it serves.
const ReadyPrefix = "COLLINE_ANALYZE_READY "

// Process is a running analyzer. It lives until Close, or until the process that started it
// exits: its stdin is a pipe from here, and it stops when that closes.
type Process struct {
	URL       string        // where it serves
	Spark     string        // its Spark version
	Startup   time.Duration // from the JVM's start to serving, as it reports
	TokenFile string        // the file holding its bearer token (0600)

	token  string
	tmp    string // the temporary directory of a generated token, removed by Close
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan struct{}
	tail   *tail
}

// FindLauncher returns dev/spark-analyze of the colline repository that holds the working
// directory, or else the one next to the running binary (bin/colline of a checkout).
func FindLauncher() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, dir := range starts {
		for {
			p := filepath.Join(dir, "dev", "spark-analyze")
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", errors.New("no analyzer launcher: dev/spark-analyze is not in a directory above the working directory " +
		"or the colline binary; give it with --analyzer (or COLLINE_ANALYZER), or use a running analyzer with --server")
}

// Start launches an analyzer and returns once it serves, or with its last output when it fails
// to start. ctx bounds the start only (JVM start-up takes tens of seconds on a busy machine).
func Start(ctx context.Context, o Options) (*Process, error) {
	launcher := o.Launcher
	if launcher == "" {
		var err error
		if launcher, err = FindLauncher(); err != nil {
			return nil, err
		}
	}
	tokenFile, tmp := o.TokenFile, ""
	if tokenFile == "" {
		var err error
		if tmp, tokenFile, err = newToken(); err != nil {
			return nil, err
		}
	}
	args := []string{"--port", "0", "--parent-stdin"}
	for _, f := range []struct{ flag, v string }{{"--catalog", o.Catalog}, {"--metastore", o.Metastore},
		{"--warehouse", o.Warehouse}, {"--token-file", tokenFile}} {
		if f.v != "" {
			args = append(args, f.flag, f.v)
		}
	}
	args = append(args, o.Args...)
	cmd := exec.Command(launcher, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Close signals the launcher and the JVM together
	cmd.Env = os.Environ()
	if o.SparkLine != "" {
		cmd.Env = append(cmd.Env, "SPARK_LINE="+o.SparkLine)
	}
	t := &tail{max: 60, w: o.Log}
	cmd.Stderr = t
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		removeTemp(tmp)
		return nil, fmt.Errorf("starting the analyzer %s: %w", launcher, err)
	}
	p := &Process{TokenFile: tokenFile, tmp: tmp, cmd: cmd, stdin: stdin, exited: make(chan struct{}), tail: t}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, ReadyPrefix) {
				select {
				case ready <- line:
				default:
				}
			}
			fmt.Fprintln(t, line)
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	select {
	case line := <-ready:
		if err := p.parseReady(line); err != nil {
			p.Close()
			return nil, err
		}
		token, err := os.ReadFile(tokenFile) // the analyzer creates it when it was missing
		if err != nil || strings.TrimSpace(string(token)) == "" {
			p.Close()
			return nil, fmt.Errorf("the analyzer's token file %s: %v", tokenFile, err)
		}
		p.token = strings.TrimSpace(string(token))
		return p, nil
	case <-p.exited:
		removeTemp(tmp)
		return nil, fmt.Errorf("the analyzer (%s) exited before it was ready (%s); its last output:\n%s",
			launcher, cmd.ProcessState, t.String())
	case <-ctx.Done():
		p.Close()
		return nil, fmt.Errorf("the analyzer (%s) was not ready: %w; its last output:\n%s", launcher, ctx.Err(), t.String())
	}
}

// parseReady reads "COLLINE_ANALYZE_READY http://127.0.0.1:PORT spark=3.5.9 startupMs=12345".
func (p *Process) parseReady(line string) error {
	f := strings.Fields(strings.TrimPrefix(line, ReadyPrefix))
	if len(f) == 0 || !strings.HasPrefix(f[0], "http://") {
		return fmt.Errorf("the analyzer's ready line %q has no address", line)
	}
	p.URL = f[0]
	for _, kv := range f[1:] {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "spark":
			p.Spark = v
		case "startupMs":
			if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
				p.Startup = time.Duration(ms) * time.Millisecond
			}
		}
	}
	return nil
}

// Client returns a client of the process, with its bearer token.
func (p *Process) Client() *Client { return &Client{URL: p.URL, Token: p.token} }

// newToken writes 32 random bytes, in hex, to a new file only its owner can read, in a new
// private temporary directory.
func newToken() (dir, file string, err error) {
	dir, err = os.MkdirTemp("", "colline-analyzer-")
	if err != nil {
		return "", "", fmt.Errorf("the analyzer's token: %w", err)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		removeTemp(dir)
		return "", "", fmt.Errorf("the analyzer's token: %w", err)
	}
	file = filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte(hex.EncodeToString(b)+"\n"), 0o600); err != nil {
		removeTemp(dir)
		return "", "", fmt.Errorf("the analyzer's token: %w", err)
	}
	return dir, file, nil
}

func removeTemp(dir string) {
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
}

// Output is the analyzer's last lines of output, for error messages.
func (p *Process) Output() string { return p.tail.String() }

// Close stops the analyzer: its stdin closes, which it takes as the end; then SIGTERM and
// SIGKILL to its process group if it lingers. Idempotent.
func (p *Process) Close() error {
	defer removeTemp(p.tmp)
	_ = p.stdin.Close()
	for _, step := range []struct {
		sig  syscall.Signal
		wait time.Duration
	}{{0, 10 * time.Second}, {syscall.SIGTERM, 10 * time.Second}, {syscall.SIGKILL, 5 * time.Second}} {
		if step.sig != 0 {
			_ = syscall.Kill(-p.cmd.Process.Pid, step.sig)
		}
		select {
		case <-p.exited:
			return nil
		case <-time.After(step.wait):
		}
	}
	return fmt.Errorf("the analyzer (pid %d) did not stop", p.cmd.Process.Pid)
}

// tail keeps the last max lines written to it (and copies everything to w).
type tail struct {
	mu    sync.Mutex
	max   int
	w     io.Writer
	lines []string
	part  string
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.w != nil {
		_, _ = t.w.Write(b)
	}
	s := t.part + string(b)
	parts := strings.Split(s, "\n")
	t.part = parts[len(parts)-1]
	t.lines = append(t.lines, parts[:len(parts)-1]...)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(append(append([]string(nil), t.lines...), t.part), "\n")
}
