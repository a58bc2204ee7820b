package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/cuda"
	"github.com/mingru/scans/vk"
)

// sweeper is a backend with a layout sweep (vk and cuda Backend.Sweep).
type sweeper interface {
	Sweep(w io.Writer, parts []string, timer scans.LayoutTimer) error
}

// sweepParts are the parts of each backend's sweep.
var sweepParts = map[string][]string{"vulkan": vk.SweepParts, "cuda": cuda.SweepParts}

// sweepTiming is the timing of each row of a sweep: enough runs that a
// GPU's clocks are up for most of them (the host draws each grid's
// inputs while the device idles).
var sweepTiming = bench.Timing{Warmup: 20, MinRuns: 30, MaxRuns: 400, Budget: 250 * time.Millisecond}

// sweepOwner is the backend whose sweep has part p, or "".
func sweepOwner(p string) string {
	for name, parts := range sweepParts {
		if slices.Contains(parts, p) {
			return name
		}
	}
	return ""
}

func sweepPartList() string {
	var s []string
	for _, name := range []string{"vulkan", "cuda"} {
		s = append(s, name+": "+strings.Join(sweepParts[name], ", "))
	}
	return strings.Join(s, "; ")
}

// runSweep runs the layout sweeps of the selected backends that have the
// parts c.sweep names and writes each backend's rows to
// sweep-<backend>.tsv as they come.
func runSweep(c config, sel []selected, stdout, stderr io.Writer) error {
	all := slices.Contains(c.sweep, "all")
	ran := 0
	for _, s := range sel {
		sw, ok := s.b.(sweeper)
		if !ok {
			continue
		}
		var parts []string
		for _, p := range c.sweep {
			if sweepOwner(p) == s.b.Name() {
				parts = append(parts, p)
			}
		}
		if !all && len(parts) == 0 {
			continue
		}
		if all {
			parts = nil
		}
		name := "sweep-" + s.b.Name() + ".tsv"
		f, err := os.Create(path(c.out, name))
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "scanbench: sweep: %s\n", s.b.Name())
		m := bench.ThisMachine([]scans.Status{s.st})
		fmt.Fprintf(f, "# %s\n# commit %s, %s, %s\n", s.st, m.Commit, m.Date, m.Go)
		timer := &bench.LayoutTimer{Timing: sweepTiming, Rand: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))}
		serr := sw.Sweep(f, parts, timer)
		if err := f.Close(); err != nil {
			return err
		}
		if serr != nil {
			return fmt.Errorf("sweep %s: %w", s.b.Name(), serr)
		}
		fmt.Fprintf(stdout, "wrote %s\n", path(c.out, name))
		ran++
	}
	if ran == 0 {
		return fmt.Errorf("--sweep: no selected backend has the parts %v", c.sweep)
	}
	return nil
}
