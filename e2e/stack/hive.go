package stack

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Hive is a running dev/hive-sql --serve: an in-process Hive 4.0.1 with colline's hook and
// metastore listener publishing to a topic, whose Thrift metastore other engines (Spark) use
// until Close. One Hive JVM runs every HiveQL file given to it, in order.
type Hive struct {
	// Metastore is the Thrift URI of Hive's metastore (thrift://127.0.0.1:port).
	Metastore string
	// Jars is the folder of Hive 4.0.1's jars: Spark 4's spark.sql.hive.metastore.jars.path.
	Jars  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	done  chan struct{} // closed when the process has exited, with exit set
	exit  error
}

// StartHive runs dev/hive-sql --serve in work, publishing to topic, with the HiveQL files
// (relative to the repository root) and -Dkey=value settings of args, and returns once those files
// have run and the metastore serves. Its output goes to s.Log.
func (s *Stack) StartHive(ctx context.Context, work, topic string, args ...string) (*Hive, error) {
	cmdArgs := []string{"--serve", "--work", work}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") && !filepath.IsAbs(a) {
			a = filepath.Join(s.Root, a)
		}
		cmdArgs = append(cmdArgs, a)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(s.Root, "dev", "hive-sql"), cmdArgs...)
	cmd.Env = append(os.Environ(), "COLLINE_KAFKA_BOOTSTRAP="+s.Brokers, "COLLINE_KAFKA_TOPIC="+topic)
	cmd.Stderr = s.Log
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("dev/hive-sql: %w", err)
	}
	h := &Hive{Jars: filepath.Join(s.Root, ".cache", "jars", "hive-4.0.1"), cmd: cmd, stdin: stdin,
		lines: make(chan string, 64), done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			fmt.Fprintln(s.Log, sc.Text())
			if strings.HasPrefix(sc.Text(), "HIVE_") {
				h.lines <- sc.Text()
			}
		}
		close(h.lines)
		h.exit = cmd.Wait()
		close(h.done)
	}()
	line, err := h.next(ctx)
	if err != nil {
		return nil, fmt.Errorf("dev/hive-sql did not get ready: %w", err)
	}
	uri, ok := strings.CutPrefix(line, "HIVE_READY ")
	if !ok {
		h.Close()
		return nil, fmt.Errorf("dev/hive-sql: %q, want HIVE_READY", line)
	}
	h.Metastore = uri
	return h, nil
}

func (h *Hive) next(ctx context.Context) (string, error) {
	select {
	case l, ok := <-h.lines:
		if !ok {
			<-h.done
			return "", fmt.Errorf("dev/hive-sql exited: %v (its output is in the test log)", h.exit)
		}
		return l, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Run runs one more HiveQL file (relative to the repository root) in the same session and returns
// colline's counters after it ("{seen=3, enqueued=2, …}", those of the publisher of the
// session's current settings).
func (h *Hive) Run(ctx context.Context, root, file string) (string, error) {
	if !filepath.IsAbs(file) {
		file = filepath.Join(root, file)
	}
	if _, err := fmt.Fprintln(h.stdin, file); err != nil {
		return "", err
	}
	line, err := h.next(ctx)
	if err != nil {
		return "", err
	}
	stats, ok := strings.CutPrefix(line, "HIVE_DONE "+file+" ok")
	if !ok {
		return "", fmt.Errorf("hive: %s", line)
	}
	return strings.TrimSpace(stats), nil
}

// Close ends the session: Hive drains colline's queue (every event is sent) and exits. It returns
// the exit error, nil for a run without failed statements.
func (h *Hive) Close() error {
	h.stdin.Close()
	select {
	case <-h.done:
		return h.exit
	case <-time.After(3 * time.Minute):
		_ = h.cmd.Process.Kill()
		return errors.New("dev/hive-sql did not exit within 3 minutes of its input closing: killed")
	}
}
