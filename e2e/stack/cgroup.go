package stack

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// MemoryCgroup is a real memory cgroup with a limit, a child of this process's own, as a
// container's resources.limits.memory makes one: processes started through Wrap run in it.
// Creating one needs the right to write the cgroup file system (root, as on this project's
// machines and CI); NewMemoryCgroup says why when it cannot.
type MemoryCgroup struct {
	Dir   string // the cgroup's directory
	Limit int64  // bytes
	procs string // the file a process joins it by
}

// NewMemoryCgroup creates a memory cgroup limited to limit bytes under this process's own
// (cgroup v1's memory controller, or v2's unified hierarchy when it delegates memory).
func NewMemoryCgroup(limit int64) (*MemoryCgroup, error) {
	name := fmt.Sprintf("colline-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	own, err := ownCgroups()
	if err != nil {
		return nil, err
	}
	if p, ok := own["memory"]; ok { // v1
		dir := filepath.Join("/sys/fs/cgroup/memory", p, name)
		return newCgroup(dir, "memory.limit_in_bytes", limit)
	}
	if p, ok := own[""]; ok { // v2
		parent := filepath.Join("/sys/fs/cgroup", p)
		ctl, err := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
		if err != nil || !strings.Contains(" "+string(ctl)+" ", " memory") {
			return nil, fmt.Errorf("cgroup v2 %s does not delegate the memory controller to its children", parent)
		}
		return newCgroup(filepath.Join(parent, name), "memory.max", limit)
	}
	return nil, errors.New("no memory cgroup in /proc/self/cgroup")
}

func newCgroup(dir, limitFile string, limit int64) (*MemoryCgroup, error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating a memory cgroup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, limitFile), []byte(strconv.FormatInt(limit, 10)), 0o644); err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("limiting cgroup %s: %w", dir, err)
	}
	return &MemoryCgroup{Dir: dir, Limit: limit, procs: filepath.Join(dir, "cgroup.procs")}, nil
}

// ownCgroups reads /proc/self/cgroup: controller (v1) or "" (v2) to path.
func ownCgroups() (map[string]string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, sc.Err()
}

// Wrap returns the path of a script, written into dir, that moves itself into the cgroup and
// then executes bin with its arguments: the process starts inside the cgroup, as in a container.
func (g *MemoryCgroup) Wrap(dir, bin string) (string, error) {
	script := filepath.Join(dir, "in-cgroup-"+filepath.Base(bin))
	body := fmt.Sprintf("#!/bin/sh\necho $$ > %q || exit 111\nexec %q \"$@\"\n", g.procs, bin)
	return script, os.WriteFile(script, []byte(body), 0o755)
}

// Remove deletes the cgroup; its processes must have exited (the kernel refuses otherwise).
func (g *MemoryCgroup) Remove() error {
	var err error
	for range 50 { // an exited process leaves the cgroup a moment later
		if err = os.Remove(g.Dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}
