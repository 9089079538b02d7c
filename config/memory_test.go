package config

import (
	"errors"
	"math"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// TestSetMemoryLimit covers the cases a real cgroup does not show here (cmd/consumer's
// TestMemoryLimitFromTheCgroup runs the binary in one): no limit, and a cgroup that cannot be read.
func TestSetMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before); containerLimit = memlimit.FromCgroup })
	t.Setenv("GOMEMLIMIT", "")
	for _, c := range []struct {
		name    string
		limit   func() (uint64, error)
		want    MemoryLimit
		wantErr string
	}{
		{"1 GiB", func() (uint64, error) { return 1 << 30, nil }, MemoryLimit{Bytes: 966367641, Source: "cgroup"}, ""},
		{"no limit", func() (uint64, error) { return 0, memlimit.ErrNoLimit }, MemoryLimit{Source: "none"}, ""},
		{"no cgroup", func() (uint64, error) { return 0, memlimit.ErrNoCgroup }, MemoryLimit{Source: "none"}, ""},
		{"unreadable", func() (uint64, error) { return 0, errors.New("permission denied") }, MemoryLimit{Source: "none"},
			"COLLINE_MEMORY_LIMIT_RATIO: reading the cgroup memory limit: permission denied"},
	} {
		debug.SetMemoryLimit(math.MaxInt64)
		containerLimit = c.limit
		got, err := SetMemoryLimit(0.9)
		if got != c.want || (err == nil) != (c.wantErr == "") || (err != nil && err.Error() != c.wantErr) {
			t.Errorf("%s: %+v, %v; want %+v, %q", c.name, got, err, c.want, c.wantErr)
		}
		want := c.want.Bytes
		if want == 0 {
			want = math.MaxInt64
		}
		if now := debug.SetMemoryLimit(-1); now != want {
			t.Errorf("%s: the runtime's limit is %d, want %d", c.name, now, want)
		}
	}
}

func TestMemoryLimitRatioIsValidated(t *testing.T) {
	for _, r := range []float64{0, 0.5, 0.9, 1} {
		if err := validateMemoryLimitRatio(r); err != nil {
			t.Errorf("%v: %v", r, err)
		}
	}
	for _, r := range []float64{-0.1, 0.2, 1.5, math.NaN()} {
		if err := validateMemoryLimitRatio(r); err == nil || !strings.HasPrefix(err.Error(), "COLLINE_MEMORY_LIMIT_RATIO: ") {
			t.Errorf("%v: %v, want an error naming COLLINE_MEMORY_LIMIT_RATIO", r, err)
		}
	}
	t.Setenv("COLLINE_MEMORY_LIMIT_RATIO", "2")
	if _, err := Load[Config](); err == nil || !strings.Contains(err.Error(), "COLLINE_MEMORY_LIMIT_RATIO: 2 is outside 0..1") {
		t.Errorf("Load with ratio 2: %v", err)
	}
	if _, err := Load[UI](); err == nil || !strings.Contains(err.Error(), "COLLINE_MEMORY_LIMIT_RATIO: 2 is outside 0..1") {
		t.Errorf("Load[UI] with ratio 2: %v", err)
	}
}
