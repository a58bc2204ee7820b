package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mingru/scans/bench"
)

// TestRun: the medians of every binary's rounds and each one's ratio to
// the base, with a variant whose second round failed.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, median float64) {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		rows := []bench.Measurement{
			{Backend: "vulkan", Op: "givens_scan", Shape: "lab", Mode: bench.ModeForward, DType: "f32", Median: median},
			{Backend: "eager", Op: "givens_scan", Shape: "lab", Mode: bench.ModeForward, DType: "f32", Median: 1},
		}
		b, err := json.Marshal(map[string]any{"rows": rows})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "scan_bench.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ab-new-1", 9e-6)
	write("ab-base-1", 10e-6)
	write("ab-new-2", 11e-6)
	write("ab-base-2", 10e-6)
	write("ab-variant-1", 5e-6)
	if err := os.MkdirAll(filepath.Join(dir, "ab-variant-2"), 0o755); err != nil { // a failed run: no JSON
		t.Fatal(err)
	}
	var out strings.Builder
	if err := run(&out, dir); err != nil {
		t.Fatal(err)
	}
	want := "| backend | op | shape | mode | dtype | new (µs) | base (µs) | variant (µs) | new / base | variant / base |\n" +
		"|---|---|---|---|---|---|---|---|---:|---:|\n" +
		"| vulkan | givens_scan | lab | forward | f32 | 9.0, 11.0 | 10.0, 10.0 | 5.0 | 1.000 | 0.500 |\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	if err := run(&out, t.TempDir()); err == nil {
		t.Error("an empty directory: no error")
	}
}
