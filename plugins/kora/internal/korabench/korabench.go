// Package korabench measures Kora's ledger at a year of traffic: reports
// (kora__get_burn and the tails) asked through the real host of a real Kora
// process over a generated ledger of millions of inferences, and the append
// throughput of several writer processes at once with durability on. The
// benchmarks are in its tests; this file keeps what they share: the cache
// of generated ledgers, percentiles and the plugin's peak memory.
package korabench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
)

// CacheDir is where generated ledgers are kept between runs, relative to
// the repository's root (under bin/, which is never committed).
const CacheDir = "bin/bench-cache"

// Seed is the generator's seed for every benchmark ledger.
const Seed = 12

// RepoRoot returns the repository's root: the nearest directory above the
// working directory holding go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("korabench: no go.mod above the working directory")
		}
		dir = parent
	}
}

// cacheName names a generated ledger of n inferences by everything that
// decides its content: the size, the schema, the generator, and the UTC
// day it ends on, since "today" must hold a day's share of the records.
func cacheName(n int, day time.Time) string {
	return fmt.Sprintf("ledger-%d-s%d-g%d-%s.db", n, ledger.SchemaVersion, ledger.GeneratorVersion, day.UTC().Format("20060102"))
}

// CachedLedger returns the path of a SQLite ledger of n inferences (and
// n/2 tool calls) ending now, generating it into dir when no ledger of
// today's generator and schema is there; older ledgers of the same size
// are removed then. generated is the generation's stats, zero when the
// ledger came from the cache.
func CachedLedger(ctx context.Context, dir string, n int) (path string, generated ledger.GenerateStats, err error) {
	now := time.Now().UTC()
	path = filepath.Join(dir, cacheName(n, now))
	if _, err := os.Stat(path); err == nil {
		return path, generated, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", generated, fmt.Errorf("korabench: cache %s: %w", dir, err)
	}
	// Generated beside the cache and renamed into it, so an interrupted
	// run never leaves a half-filled ledger under the cache's name.
	tmp, err := os.MkdirTemp(dir, "generating-")
	if err != nil {
		return "", generated, fmt.Errorf("korabench: cache %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	generated, err = ledger.Generate(ctx, ledger.GenerateOptions{StateDir: tmp, Inferences: n, ToolCalls: -1, Seed: Seed, Now: now})
	if err != nil {
		return "", generated, err
	}
	if err := os.Rename(filepath.Join(tmp, ledger.DefaultSQLiteFile), path); err != nil {
		return "", generated, fmt.Errorf("korabench: cache %s: %w", dir, err)
	}
	old, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("ledger-%d-*.db*", n)))
	for _, p := range old {
		if !strings.HasPrefix(filepath.Base(p), filepath.Base(path)) {
			os.Remove(p)
		}
	}
	return path, generated, nil
}

// SizeLabel names a ledger size the way the benchmarks do: 100k, 1M, 10M.
func SizeLabel(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n >= 1000 && n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

// Percentile returns the p-th percentile (0 < p <= 100) of ds by the
// nearest-rank method; ds is sorted in place.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	rank := int(float64(len(ds))*p/100+0.999999) - 1
	return ds[min(max(rank, 0), len(ds)-1)]
}

// ResetPeakRSS resets the peak resident memory (VmHWM) of process pid to
// its current resident memory, so that a later PeakRSSKiB covers only
// what happens in between.
func ResetPeakRSS(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// PeakRSSKiB returns the peak resident memory (VmHWM) of process pid.
func PeakRSSKiB(pid int) (int64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			return strconv.ParseInt(f[1], 10, 64)
		}
	}
	return 0, fmt.Errorf("korabench: no VmHWM in /proc/%d/status", pid)
}
