package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"syscall"
	"time"

	"github.com/colline/colline/events"
	"github.com/colline/colline/process"
)

// rate is one measured pass over the corpus.
// Rates are per CPU second of the process (user + system, GC included), not per wall second: on a
// shared machine the wall time depends on what else runs, the CPU time much less.
type rate struct {
	seconds float64 // CPU
	wall    float64
	events  int
	bytes   int64
	mallocs uint64
	alloc   uint64
}

func (r rate) mbps() float64           { return float64(r.bytes) / 1e6 / r.seconds }
func (r rate) eventsPerSec() float64   { return float64(r.events) / r.seconds }
func (r rate) allocsPerEvent() float64 { return float64(r.mallocs) / float64(r.events) }
func (r rate) bytesPerEvent() float64  { return float64(r.alloc) / float64(r.events) }

// measure runs f over evs until at least minTime has passed (whole passes), and counts allocations.
func measure(evs []event, minTime time.Duration, f func([]byte) error) (rate, error) {
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cpuTime()
	start := time.Now()
	var r rate
	for time.Since(start) < minTime {
		for _, e := range evs {
			if err := f(e.data); err != nil {
				return r, fmt.Errorf("%s: %w", e.name, err)
			}
			r.events++
			r.bytes += int64(len(e.data))
		}
	}
	r.wall = time.Since(start).Seconds()
	r.seconds = cpuTime() - cpu0
	runtime.ReadMemStats(&m1)
	r.mallocs, r.alloc = m1.Mallocs-m0.Mallocs, m1.TotalAlloc-m0.TotalAlloc
	return r, nil
}

// cpuTime returns the CPU seconds the process used so far.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func unmarshalAny(b []byte) error {
	var v any
	return json.Unmarshal(b, &v)
}

func decodeOnly(b []byte) error {
	_, err := events.Decode(b)
	return err
}

// decodeExtract is the consumer's processing step, without the graph write.
func decodeExtract(b []byte) error {
	_, err := process.Step{}.Item(b)
	return err
}

// benchDecode measures json.Unmarshal into any (the baseline), events.Decode alone, and
// events.Decode + plan.Extract over the corpus, in interleaved rounds; each figure is the median
// round. With cpuProfile set, it then profiles Decode + Extract alone for the same time.
func benchDecode(r *report, evs []event, rounds int, roundTime time.Duration, cpuProfile, memProfile string) error {
	kinds := []struct {
		name string
		f    func([]byte) error
	}{
		{"json.Unmarshal(any)", unmarshalAny},
		{"events.Decode", decodeOnly},
		{"Decode+Extract", decodeExtract},
	}
	// Warm up: page in the corpus, grow the heap.
	for _, k := range kinds {
		if _, err := measure(evs, 0, k.f); err != nil {
			return fmt.Errorf("%s: %w", k.name, err)
		}
	}
	results := make([][]rate, len(kinds))
	for i := 0; i < rounds; i++ {
		for k, kind := range kinds {
			x, err := measure(evs, roundTime, kind.f)
			if err != nil {
				return fmt.Errorf("%s: %w", kind.name, err)
			}
			results[k] = append(results[k], x)
		}
	}
	med := make([]rate, len(kinds))
	for k := range kinds {
		rs := results[k]
		slices.SortFunc(rs, func(a, b rate) int {
			switch {
			case a.mbps() < b.mbps():
				return -1
			case a.mbps() > b.mbps():
				return 1
			}
			return 0
		})
		med[k] = rs[len(rs)/2]
		lo, hi := rs[0].mbps(), rs[len(rs)-1].mbps()
		r.notef("decode: %-20s median %.1f MB per CPU-s (rounds %.1f..%.1f; wall %.1f MB/s), %.0f events per CPU-s, %.0f allocs/event, %.0f KB allocated/event",
			kinds[k].name, med[k].mbps(), lo, hi, float64(med[k].bytes)/1e6/med[k].wall, med[k].eventsPerSec(), med[k].allocsPerEvent(), med[k].bytesPerEvent()/1024)
	}
	base, dec, full := med[0], med[1], med[2]
	ratio := base.mbps() / full.mbps() // time of colline / time of the baseline
	r.add(row{part: "a", metric: "decode+extract throughput", value: fmt.Sprintf("%.1f MB/CPU-s", full.mbps()),
		baseline: fmt.Sprintf("%.1f MB/CPU-s json.Unmarshal(any)", base.mbps()), target: "time ratio ≤ 0.7 (issue 17)",
		result: fmt.Sprintf("ratio %.2f", ratio), met: ratio <= 0.7})
	r.add(row{part: "a", metric: "decode+extract events/s", value: fmt.Sprintf("%.0f /CPU-s", full.eventsPerSec()),
		baseline: fmt.Sprintf("%.0f /CPU-s", base.eventsPerSec()), target: "-"})
	r.add(row{part: "a", metric: "decode+extract allocs/event", value: fmt.Sprintf("%.0f", full.allocsPerEvent()),
		baseline: fmt.Sprintf("%.0f", base.allocsPerEvent()), target: "-"})
	r.add(row{part: "a", metric: "decode alone", value: fmt.Sprintf("%.1f MB/CPU-s, %.0f allocs/event", dec.mbps(), dec.allocsPerEvent()),
		baseline: fmt.Sprintf("%.1f MB/CPU-s", base.mbps()), target: "-", result: fmt.Sprintf("ratio %.2f", base.mbps()/dec.mbps())})

	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		_, err = measure(evs, time.Duration(rounds)*roundTime, decodeExtract)
		pprof.StopCPUProfile()
		f.Close()
		if err != nil {
			return err
		}
		r.notef("decode: CPU profile of Decode+Extract in %s (go tool pprof -top %s)", cpuProfile, cpuProfile)
	}
	if memProfile != "" {
		old := runtime.MemProfileRate
		runtime.MemProfileRate = 4096
		if _, err := measure(evs, roundTime, decodeExtract); err != nil {
			return err
		}
		runtime.MemProfileRate = old
		f, err := os.Create(memProfile)
		if err != nil {
			return err
		}
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			return err
		}
		f.Close()
		r.notef("decode: allocation profile in %s (go tool pprof -sample_index=alloc_space -top %s)", memProfile, memProfile)
	}
	return nil
}
