package main

import (
	"bufio"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuMeter tells where a phase's CPU went: the bench itself (the consumer's loop and writer run in
// it), and each local service found by the TCP port it listens on (Neo4j, Kafka). Linux only; a
// service it cannot find is left out of the line it prints.
type cpuMeter struct {
	names []string // "Neo4j", "Kafka"
	pids  []int    // 0: not found on this machine
}

// cpuSample is one reading: CPU seconds of the bench and of each service, the machine's busy and
// total jiffies, and the wall clock.
type cpuSample struct {
	self      float64
	services  []float64
	busy, all uint64
	wall      time.Time
}

// newCPUMeter finds the processes listening on the ports of the given addresses, each a name and a
// host:port or URL ("Neo4j", "bolt://127.0.0.1:17687").
func newCPUMeter(services ...[2]string) *cpuMeter {
	m := &cpuMeter{}
	for _, s := range services {
		m.names = append(m.names, s[0])
		m.pids = append(m.pids, listenerPID(port(s[1])))
	}
	return m
}

func port(addr string) int {
	if u, err := url.Parse(addr); err == nil && u.Port() != "" {
		addr = u.Host
	}
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(p)
	return n
}

// listenerPID is the process with a socket listening on TCP port p, from /proc/net/tcp{,6}
// (state 0A) and the socket links under /proc/*/fd; 0 when there is none it may see.
func listenerPID(p int) int {
	if p == 0 {
		return 0
	}
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		file, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(file)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 || fs[3] != "0A" {
				continue
			}
			i := strings.LastIndexByte(fs[1], ':')
			if lp, err := strconv.ParseInt(fs[1][i+1:], 16, 32); err == nil && int(lp) == p {
				inodes["socket:["+fs[9]+"]"] = true
			}
		}
		file.Close()
	}
	if len(inodes) == 0 {
		return 0
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && inodes[l] {
			pid, _ := strconv.Atoi(strings.Split(fd, "/")[2])
			return pid
		}
	}
	return 0
}

// procCPU is a process's user+system CPU seconds from /proc/PID/stat (USER_HZ 100).
func procCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	fs := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // fields from 3 (state) on
	if len(fs) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(fs[11], 64) // field 14
	st, _ := strconv.ParseFloat(fs[12], 64) // field 15
	return (ut + st) / 100
}

// machineCPU is the busy and total jiffies of all cores, from /proc/stat's first line.
func machineCPU() (busy, all uint64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	for i, f := range strings.Fields(line)[1:] {
		v, _ := strconv.ParseUint(f, 10, 64)
		all += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, all
}

func (m *cpuMeter) sample() cpuSample {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	s := cpuSample{self: tvSeconds(ru.Utime) + tvSeconds(ru.Stime), wall: time.Now()}
	for _, pid := range m.pids {
		s.services = append(s.services, procCPU(pid))
	}
	s.busy, s.all = machineCPU()
	return s
}

func tvSeconds(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }

// per tells the CPU milliseconds each process spent per unit (n of them) between a and b, their
// sum, and how many of the machine's cores were busy on average.
func (m *cpuMeter) per(a, b cpuSample, n float64, unit string) string {
	if n == 0 {
		return "nothing done"
	}
	ms := func(d float64) float64 { return d * 1000 / n }
	total := ms(b.self - a.self)
	parts := []string{fmt.Sprintf("bench (the consumer) %.3f", total)}
	for i, name := range m.names {
		if m.pids[i] == 0 {
			continue
		}
		d := ms(b.services[i] - a.services[i])
		total += d
		parts = append(parts, fmt.Sprintf("%s (pid %d) %.3f", name, m.pids[i], d))
	}
	cores := 0.0
	if b.all > a.all {
		cores = float64(b.busy-a.busy) / float64(b.all-a.all) * float64(runtime.NumCPU())
	}
	return fmt.Sprintf("CPU ms per %s: %s; together %.3f; the machine's %d cores %.2f busy on average over %.1fs",
		unit, strings.Join(parts, ", "), total, runtime.NumCPU(), cores, b.wall.Sub(a.wall).Seconds())
}

// add accumulates the interval from a to b into acc, a pair of samples whose difference is the
// sum of the intervals so far (for per).
func (m *cpuMeter) add(acc [2]cpuSample, a, b cpuSample) [2]cpuSample {
	if acc[1].wall.IsZero() {
		return [2]cpuSample{a, b}
	}
	acc[1].self += b.self - a.self
	for i := range acc[1].services {
		acc[1].services[i] += b.services[i] - a.services[i]
	}
	acc[1].busy += b.busy - a.busy
	acc[1].all += b.all - a.all
	acc[1].wall = acc[1].wall.Add(b.wall.Sub(a.wall))
	return acc
}

// profiled runs part with the Go CPU profile written to path, when path is set.
func profiled(r *report, path string, part func() error) error {
	if path == "" {
		return part()
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	err = part()
	pprof.StopCPUProfile()
	r.notef("CPU profile of the part in %s (go tool pprof -top %s)", path, path)
	return err
}
