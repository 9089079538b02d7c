package config

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// DefaultMemoryLimitRatio is the default of COLLINE_MEMORY_LIMIT_RATIO: the share of the
// container's memory limit that the Go runtime's soft limit (GOMEMLIMIT) gets. The rest is for
// what the runtime does not count: the binary, and the page cache charged to the container.
const DefaultMemoryLimitRatio = 0.9

// containerLimit reads the memory limit of the process's cgroup (v1 or v2); a test replaces it.
var containerLimit = memlimit.FromCgroup

// MemoryLimit is what SetMemoryLimit decided: the soft limit in bytes (0: none) and where it
// came from.
type MemoryLimit struct {
	Bytes  int64
	Source string // "GOMEMLIMIT", "cgroup", "off" or "none"
}

// LogValue logs the limit with its source.
func (m MemoryLimit) LogValue() slog.Value {
	return slog.GroupValue(slog.String("source", m.Source), slog.Int64("bytes", m.Bytes))
}

// SetMemoryLimit sets the Go runtime's soft memory limit to ratio times the memory limit of the
// process's cgroup (a container's resources.limits.memory), so that the garbage collector works
// harder before the kernel kills the process, rather than letting the heap grow to twice the live
// data. GOMEMLIMIT in the environment wins (the runtime applied it already); ratio 0 turns this
// off; no cgroup limit leaves the runtime's default (no limit). An unreadable cgroup is returned
// as an error for the caller to log: the process runs without a limit then.
func SetMemoryLimit(ratio float64) (MemoryLimit, error) {
	if v := os.Getenv("GOMEMLIMIT"); v != "" {
		return MemoryLimit{Bytes: debug.SetMemoryLimit(-1), Source: "GOMEMLIMIT"}, nil
	}
	if ratio == 0 {
		return MemoryLimit{Source: "off"}, nil
	}
	limit, err := containerLimit()
	switch {
	case errors.Is(err, memlimit.ErrNoLimit), errors.Is(err, memlimit.ErrNoCgroup), errors.Is(err, memlimit.ErrCgroupsNotSupported):
		return MemoryLimit{Source: "none"}, nil
	case err != nil:
		return MemoryLimit{Source: "none"}, fmt.Errorf("%s_MEMORY_LIMIT_RATIO: reading the cgroup memory limit: %w", Prefix, err)
	}
	soft := int64(float64(limit) * ratio)
	debug.SetMemoryLimit(soft)
	return MemoryLimit{Bytes: soft, Source: "cgroup"}, nil
}

// validateMemoryLimitRatio checks COLLINE_MEMORY_LIMIT_RATIO.
func validateMemoryLimitRatio(r float64) error {
	if !(r >= 0 && r <= 1) { // also NaN
		return fmt.Errorf("%s_MEMORY_LIMIT_RATIO: %v is outside 0..1 (0 turns the limit off)", Prefix, r)
	}
	if r > 0 && r < 0.5 {
		return fmt.Errorf("%s_MEMORY_LIMIT_RATIO: %v is below 0.5: the garbage collector would run far more often than needed; use 0 to turn the limit off", Prefix, r)
	}
	return nil
}
