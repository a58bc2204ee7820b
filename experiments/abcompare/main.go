// Command abcompare reads the results of `scripts/gpu-run.sh ab` (the
// directories ab-new-1, ab-base-1, ab-new-2, ... each holding a
// scan_bench.json) and prints, as Markdown, each GPU row's medians in
// every round, new and base, and the ratio of their sums (below 1: the
// new binary is faster).
//
// Usage:
//
//	go run ./experiments/abcompare experiments/bench/h200/run-2026-11-30-1c65182/calls-6bb213d/ab
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mingru/scans/bench"
)

// key names one row of a benchmark table.
type key struct{ backend, op, shape, mode, dtype string }

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: abcompare <directory of ab-new-N and ab-base-N>")
		os.Exit(2)
	}
	if err := run(os.Stdout, os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "abcompare:", err)
		os.Exit(1)
	}
}

// run writes the comparison of the rounds under dir to w.
func run(w io.Writer, dir string) error {
	medians := map[string]map[key][]float64{"new": {}, "base": {}}
	rounds := 0
	for round := 1; ; round++ {
		found := false
		for _, side := range []string{"new", "base"} {
			path := filepath.Join(dir, fmt.Sprintf("ab-%s-%d", side, round), "scan_bench.json")
			b, err := os.ReadFile(path)
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				return err
			}
			var r struct {
				Rows []bench.Measurement `json:"rows"`
			}
			if err := json.Unmarshal(b, &r); err != nil {
				return fmt.Errorf("%s: %v", path, err)
			}
			found = true
			for _, m := range r.Rows {
				if m.Backend == "eager" {
					continue
				}
				k := key{m.Backend, string(m.Op), m.Shape, string(m.Mode), m.DType}
				medians[side][k] = append(medians[side][k], m.Median)
			}
		}
		if !found {
			break
		}
		rounds = round
	}
	if rounds == 0 {
		return fmt.Errorf("%s: no ab-new-1 or ab-base-1 with a scan_bench.json", dir)
	}
	var keys []key
	for k := range medians["new"] {
		if _, ok := medians["base"][k]; ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return strings.Join([]string{a.backend, a.op, a.shape, a.mode, a.dtype}, "\x00") <
			strings.Join([]string{b.backend, b.op, b.shape, b.mode, b.dtype}, "\x00")
	})
	fmt.Fprintf(w, "| backend | op | shape | mode | dtype | new (µs) | base (µs) | new / base |\n|---|---|---|---|---|---|---|---:|\n")
	for _, k := range keys {
		n, b := medians["new"][k], medians["base"][k]
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %.3f |\n", k.backend, k.op, k.shape, k.mode, k.dtype,
			list(n), list(b), sum(n)/sum(b))
	}
	return nil
}

// list formats seconds as microseconds, one per round.
func list(s []float64) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = fmt.Sprintf("%.1f", v*1e6)
	}
	return strings.Join(parts, ", ")
}

func sum(s []float64) float64 {
	t := 0.0
	for _, v := range s {
		t += v
	}
	return t
}
