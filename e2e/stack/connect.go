package stack

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ConnectServer is a Spark Connect server with the listener (dev/spark-connect), started by
// StartConnect; Stop it.
type ConnectServer struct {
	Port int
	cmd  *exec.Cmd
	done chan error
}

// StartConnect starts dev/spark-connect for the Spark line (4.1_2.13, 3.5_2.12) on a free port,
// with the listener publishing to topic and args (-Dk=v settings) passed on, and waits until it
// accepts connections. Its output goes to the stack's Log.
func (s *Stack) StartConnect(ctx context.Context, line, work, topic string, args ...string) (*ConnectServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(filepath.Join(s.Root, "dev", "spark-connect"), append([]string{"--work", work, "--port", fmt.Sprint(port)}, args...)...)
	cmd.Env = append(os.Environ(), "SPARK_LINE="+line, "COLLINE_KAFKA_BOOTSTRAP="+s.Brokers, "COLLINE_KAFKA_TOPIC="+topic)
	cmd.Stdout, cmd.Stderr = s.Log, s.Log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("dev/spark-connect: %w", err)
	}
	srv := &ConnectServer{Port: port, cmd: cmd, done: make(chan error, 1)}
	go func() { srv.done <- cmd.Wait() }()
	for {
		select {
		case err := <-srv.done:
			return nil, fmt.Errorf("dev/spark-connect stopped before it listened on %d: %v", port, err)
		case <-ctx.Done():
			srv.Stop()
			return nil, fmt.Errorf("dev/spark-connect: not listening on %d: %w", port, ctx.Err())
		case <-time.After(time.Second):
		}
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
			c.Close()
			return srv, nil
		}
	}
}

// Stop stops the server (SIGTERM: Spark stops and the listener publishes what it has queued)
// and waits for it, at most two minutes.
func (c *ConnectServer) Stop() error {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-c.done:
		return err
	case <-time.After(2 * time.Minute):
		_ = c.cmd.Process.Kill()
		return fmt.Errorf("dev/spark-connect did not stop within 2 minutes: killed")
	}
}

// ConnectClient runs SQL files and Python programs (relative to the repository root) through
// the server as user (dev/connect/run.py in the venv of dev/connect/setup), with session
// settings conf (k=v) and more environment variables env.
func (s *Stack) ConnectClient(ctx context.Context, line string, c *ConnectServer, user string, conf, env []string, files ...string) error {
	out, err := exec.CommandContext(ctx, filepath.Join(s.Root, "dev", "connect", "setup"), line).Output()
	if err != nil {
		return fmt.Errorf("dev/connect/setup %s: %w", line, err)
	}
	args := []string{filepath.Join(s.Root, "dev", "connect", "run.py"), "--remote", fmt.Sprintf("sc://127.0.0.1:%d/;user_id=%s", c.Port, user)}
	for _, kv := range conf {
		args = append(args, "--conf", kv)
	}
	for _, f := range files {
		args = append(args, filepath.Join(s.Root, f))
	}
	cmd := exec.CommandContext(ctx, strings.TrimSpace(string(out)), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = s.Log, s.Log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("Spark Connect client as %s (%s): %w", user, strings.Join(files, " "), err)
	}
	return nil
}
