// Command abcompare reads the results of `scripts/gpu-run.sh ab` (the
// directories ab-new-1, ab-base-1, ab-new-2, ..., and ab-<variant>-N for
// each variant that scripts/build-gpu-bins.sh built, each holding a
// scan_bench.json) and prints, as Markdown, each GPU row's medians in
// every round, binary by binary, and for each binary but the base the
// ratio of its mean to the base's (below 1: faster than the base).
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
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mingru/scans/bench"
)

// key names one row of a benchmark table.
type key struct{ backend, op, shape, mode, dtype string }

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: abcompare <directory of ab-new-N, ab-base-N and ab-<variant>-N>")
		os.Exit(2)
	}
	if err := run(os.Stdout, os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "abcompare:", err)
		os.Exit(1)
	}
}

// roundDir matches a result directory: ab-<binary>-<round>.
var roundDir = regexp.MustCompile(`^ab-(.+)-([0-9]+)$`)

// run writes the comparison of the rounds under dir to w.
func run(w io.Writer, dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	// medians[binary][row] holds the row's median of each round, in order.
	medians := map[string]map[key][]float64{}
	type result struct {
		binary string
		round  int
	}
	var results []result
	for _, e := range entries {
		m := roundDir.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		round, _ := strconv.Atoi(m[2])
		results = append(results, result{m[1], round})
	}
	sort.Slice(results, func(i, j int) bool { return results[i].round < results[j].round })
	for _, r := range results {
		path := filepath.Join(dir, fmt.Sprintf("ab-%s-%d", r.binary, r.round), "scan_bench.json")
		b, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			continue // a run that failed; its log says why
		}
		if err != nil {
			return err
		}
		var out struct {
			Rows []bench.Measurement `json:"rows"`
		}
		if err := json.Unmarshal(b, &out); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		if medians[r.binary] == nil {
			medians[r.binary] = map[key][]float64{}
		}
		for _, m := range out.Rows {
			if m.Backend == "eager" {
				continue
			}
			k := key{m.Backend, string(m.Op), m.Shape, string(m.Mode), m.DType}
			medians[r.binary][k] = append(medians[r.binary][k], m.Median)
		}
	}
	if medians["new"] == nil || medians["base"] == nil {
		return fmt.Errorf("%s: no ab-new-N and ab-base-N with a scan_bench.json", dir)
	}
	// The binaries in order: new, base, then the variants by name.
	binaries := []string{"new", "base"}
	var variants []string
	for b := range medians {
		if b != "new" && b != "base" {
			variants = append(variants, b)
		}
	}
	sort.Strings(variants)
	binaries = append(binaries, variants...)
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
	head, rule := "| backend | op | shape | mode | dtype |", "|---|---|---|---|---|"
	for _, b := range binaries {
		head += fmt.Sprintf(" %s (µs) |", b)
		rule += "---|"
	}
	for _, b := range binaries {
		if b != "base" {
			head += fmt.Sprintf(" %s / base |", b)
			rule += "---:|"
		}
	}
	fmt.Fprintf(w, "%s\n%s\n", head, rule)
	for _, k := range keys {
		line := fmt.Sprintf("| %s | %s | %s | %s | %s |", k.backend, k.op, k.shape, k.mode, k.dtype)
		for _, b := range binaries {
			line += fmt.Sprintf(" %s |", list(medians[b][k]))
		}
		base := mean(medians["base"][k])
		for _, b := range binaries {
			if b == "base" {
				continue
			}
			if v := medians[b][k]; len(v) > 0 {
				line += fmt.Sprintf(" %.3f |", mean(v)/base)
			} else {
				line += " - |"
			}
		}
		fmt.Fprintln(w, line)
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

// mean is the mean of the rounds' medians (a binary whose run failed in a
// round has fewer).
func mean(s []float64) float64 {
	t := 0.0
	for _, v := range s {
		t += v
	}
	return t / float64(len(s))
}
