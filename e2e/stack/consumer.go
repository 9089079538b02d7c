package stack

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Consumer is a running consumer binary: its JSON log goes to a file and its admin server's
// address is read from the log's "serving" line.
type Consumer struct {
	Addr    string        // host:port of the admin server (/metrics, /readyz, /healthz)
	LogFile string        // the consumer's stderr, one JSON line a record
	Timeout time.Duration // of each Get; 10 s unless set

	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited
	err  error         // its Wait error, set before done is closed

	mu   sync.Mutex
	seen map[string]int // log lines so far, by message
}

// Environ is this process's environment without its COLLINE_ variables.
func Environ() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COLLINE_") {
			out = append(out, kv)
		}
	}
	return out
}

// StartConsumer runs bin with Environ, COLLINE_HTTP_ADDR=127.0.0.1:0, COLLINE_LOG_FORMAT=json and
// env (later ones win), appends its stderr to logFile, and waits up to a minute for its admin
// server. The process is killed when t ends.
func StartConsumer(t testing.TB, bin, logFile string, env ...string) *Consumer {
	t.Helper()
	c := &Consumer{LogFile: logFile, Timeout: 10 * time.Second, done: make(chan struct{}), seen: map[string]int{}}
	c.cmd = exec.Command(bin)
	c.cmd.Env = append(Environ(), "COLLINE_HTTP_ADDR=127.0.0.1:0", "COLLINE_LOG_FORMAT=json")
	c.cmd.Env = append(c.cmd.Env, env...)
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		f.Close()
		t.Fatal(err)
	}
	addrc := make(chan string, 1)
	go func() {
		defer f.Close()
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			f.Write(append(sc.Bytes(), '\n'))
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil {
				c.mu.Lock()
				c.seen[line.Msg]++
				c.mu.Unlock()
				if line.Msg == "serving" {
					addrc <- line.Addr
				}
			}
		}
		io.Copy(io.Discard, stderr)
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		if c.Running() {
			c.cmd.Process.Kill()
		}
		<-c.done
	})
	select {
	case c.Addr = <-addrc:
	case <-c.done:
		t.Fatalf("consumer exited (%v) before serving; log %s:\n%s", c.err, logFile, c.Logs())
	case <-time.After(60 * time.Second):
		t.Fatalf("consumer: no serving line; log %s", logFile)
	}
	return c
}

// Seen returns how many log lines with message msg the process has written so far (read as they
// come, so a test can act the moment the consumer reaches a state it logs).
func (c *Consumer) Seen(msg string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[msg]
}

// Running tells whether the process has not exited yet.
func (c *Consumer) Running() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// Err is the process's exit error once it has exited (nil before).
func (c *Consumer) Err() error {
	if c.Running() {
		return nil
	}
	return c.err
}

// Pid is the process id.
func (c *Consumer) Pid() int { return c.cmd.Process.Pid }

// Signal sends sig to the process.
func (c *Consumer) Signal(sig os.Signal) error { return c.cmd.Process.Signal(sig) }

// Kill sends SIGKILL and waits for the process to be gone.
func (c *Consumer) Kill() {
	c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
}

// Wait waits up to within for the process to exit and returns its exit code (-1 when it did not
// exit normally).
func (c *Consumer) Wait(t testing.TB, within time.Duration) int {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(within):
		t.Fatalf("consumer still running after %v; log %s", within, c.LogFile)
	}
	var exit *exec.ExitError
	if errors.As(c.err, &exit) {
		return exit.ExitCode()
	}
	if c.err != nil {
		return -1
	}
	return 0
}

// Get fetches path from the admin server on a connection of its own and returns the status code
// and the body.
func (c *Consumer) Get(path string) (int, string, error) {
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Timeout: c.Timeout, Transport: tr}).Get("http://" + c.Addr + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// Logs returns the log file's content.
func (c *Consumer) Logs() string {
	b, _ := os.ReadFile(c.LogFile)
	return string(b)
}
