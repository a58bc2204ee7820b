package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/conformance"
)

// selected is a backend chosen to run, with its status.
type selected struct {
	b  scans.Backend
	st scans.Status
}

// selectBackends reports every compiled backend's status on stderr and
// returns the available ones the command line names (when it names none,
// every available one but a Vulkan device that runs on the CPU, such as
// lavapipe, which takes minutes where a GPU takes seconds). A named
// backend that is missing or unavailable is an error.
func selectBackends(c config, stderr io.Writer) ([]selected, []scans.Status, error) {
	all := compiledBackends()
	var sel []selected
	var statuses []scans.Status
	for _, b := range all {
		st := b.Status()
		statuses = append(statuses, st)
		if st.Available {
			fmt.Fprintf(stderr, "scanbench: backend %s: found: %s\n", b.Name(), st)
		} else {
			fmt.Fprintf(stderr, "scanbench: backend %s: missing: %s\n", b.Name(), st.Reason)
		}
		if len(c.backends) == 0 && st.Available {
			if st.Software {
				fmt.Fprintf(stderr, "scanbench: backend %s runs on the CPU: not run unless named (--backends %s)\n", b.Name(), b.Name())
				continue
			}
			sel = append(sel, selected{b, st})
		}
	}
	for _, name := range c.backends {
		switch name {
		case "vk":
			name = "vulkan"
		case "triton":
			name = "cuda"
		}
		i := slices.IndexFunc(all, func(b scans.Backend) bool { return b.Name() == name })
		if i < 0 {
			names := make([]string, len(all))
			for j, b := range all {
				names[j] = b.Name()
			}
			return nil, statuses, fmt.Errorf("backend %q is not compiled in (compiled: %v; cuda needs -tags cuda)", name, names)
		}
		if !statuses[i].Available {
			return nil, statuses, fmt.Errorf("backend %s is not available: %s", name, statuses[i].Reason)
		}
		if !slices.ContainsFunc(sel, func(s selected) bool { return s.b.Name() == name }) {
			sel = append(sel, selected{all[i], statuses[i]})
		}
	}
	if len(sel) == 0 {
		return nil, statuses, errors.New("no backend is available")
	}
	return sel, statuses, nil
}

// nextSteps closes a run without flags.
const nextSteps = `
That was the quick conformance check. Next:
  scanbench --check                      the full matrix (about 1500 rows a backend)
  scanbench --bench                      the benchmarks at the lab, long-T and large shapes
  scanbench --check --backends vulkan    include a Vulkan device that runs on the CPU (lavapipe)
  scanbench --help                       every mode and flag
`

// execute runs the modes of c and returns the exit code.
func execute(c config, stdout, stderr io.Writer) (int, error) {
	if c.replot != "" {
		if err := replot(c.replot, stdout); err != nil {
			return 2, err
		}
		return 0, nil
	}
	// The devices the backends open: New reads these when the backends
	// are made (selectBackends, listDevices).
	for name, dev := range c.devices {
		os.Setenv(map[string]string{"vulkan": "MINGRU_VK_DEVICE", "cuda": "MINGRU_CUDA_DEVICE"}[name], dev)
	}
	if c.listDevices {
		return listDevices(stdout)
	}
	sel, statuses, err := selectBackends(c, stderr)
	if err != nil {
		return 2, err
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return 2, err
	}
	m := bench.ThisMachine(statuses)
	code := 0
	if c.check {
		failed, err := runCheck(c, m, sel, stdout, stderr)
		if err != nil {
			return 2, err
		}
		if failed > 0 {
			code = 1
		}
	}
	if c.bench {
		if err := runBench(c, m, sel, stdout, stderr); err != nil {
			return 2, err
		}
	}
	if c.memory {
		if err := runMemory(c, m, sel, stdout, stderr); err != nil {
			return 2, err
		}
	}
	if c.step {
		if err := runStep(c, m, sel, stdout, stderr); err != nil {
			return 2, err
		}
	}
	if c.sweep != nil {
		if err := runSweep(c, sel, stdout, stderr); err != nil {
			return 2, err
		}
	}
	if c.defaulted {
		fmt.Fprint(stdout, nextSteps)
	}
	return code, nil
}

// runCheck runs the parity matrix and writes scan_parity.{json,md}. It
// returns the number of failing rows.
func runCheck(c config, m bench.Machine, sel []selected, stdout, stderr io.Writer) (int, error) {
	cases := conformance.FilterCases(conformance.Cases(c.quick), c.ops, c.dtypes)
	if len(cases) == 0 {
		return 0, errors.New("--check: no case matches --ops and --dtypes")
	}
	seed := c.seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	fmt.Fprintf(stderr, "scanbench: check: %d cases per backend, seed %d\n", len(cases), seed)
	var rows []conformance.Row
	for _, s := range sel {
		ref := conformance.ReferenceFor(s.b)
		rows = append(rows, conformance.ParitySeed(s.b, ref, cases, seed, stderr)...)
	}
	rep := parityReport{Machine: m, Quick: c.quick, Seed: seed, Summary: summarize(rows), Rows: rows}
	if err := writeJSON(c.out, "scan_parity.json", rep); err != nil {
		return 0, err
	}
	if err := writeFile(c.out, "scan_parity.md", rep.markdown()); err != nil {
		return 0, err
	}
	failed := 0
	for _, s := range rep.Summary {
		fmt.Fprintf(stdout, "check %-8s vs %-8s rows=%d passed=%d failed=%d\n", s.Backend, s.Reference, s.Rows, s.Passed, s.Failed)
		failed += s.Failed
	}
	fmt.Fprintf(stdout, "wrote %s and %s\n", path(c.out, "scan_parity.json"), path(c.out, "scan_parity.md"))
	return failed, nil
}

// runBench measures every shape x op x mode x dtype on every backend and
// writes scan_bench.{json,md,png}.
func runBench(c config, m bench.Machine, sel []selected, stdout, stderr io.Writer) error {
	timing := bench.DefaultTiming
	copyBytes := int64(256 << 20)
	if c.quick {
		timing = bench.QuickTiming
		copyBytes = 64 << 20
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	rep := benchReport{Machine: m, Quick: c.quick, Timing: timing}
	for _, s := range sel {
		ceil := ceiling{Backend: s.b.Name()}
		if inst, ok := s.b.(scans.Instrumented); ok {
			ceil.Kind = "device copy (Instrumented.CopyBandwidth)"
			bw, err := inst.CopyBandwidth(copyBytes)
			if err != nil {
				ceil.Err = err.Error()
			}
			lat, err := inst.DispatchLatency()
			if err != nil && ceil.Err == "" {
				ceil.Err = err.Error()
			}
			ceil.BytesPerSec, ceil.Latency = bw, lat.Seconds()
		} else {
			ceil.Kind = "host copy (Go copy on every core)"
			ceil.BytesPerSec = bench.HostCopyBandwidth(copyBytes)
		}
		fmt.Fprintf(stderr, "scanbench: bench %s: %s %.1f GB/s, launch latency %.1f µs %s\n",
			s.b.Name(), ceil.Kind, ceil.BytesPerSec/1e9, ceil.Latency*1e6, ceil.Err)
		rep.Ceilings = append(rep.Ceilings, ceil)
	}
	// Inputs are drawn once per shape, op and type, when a backend first
	// needs them, and shared by every backend and mode.
	for _, sh := range c.shapes {
		for _, op := range c.opList() {
			d, _ := bench.NormalizeDims(op, sh.Dims(op))
			for _, dt := range c.benchDTypes() {
				var in *bench.InputSet
				var inErr error
				inputs := func() (*bench.InputSet, error) {
					if in == nil && inErr == nil {
						start := time.Now()
						in, inErr = bench.InputsInit(op, d, dt, bench.Typical, bench.BenchInit(op), rng)
						fmt.Fprintf(stderr, "scanbench: bench %s %s %s: inputs drawn in %s\n", sh.Name, op, dt, time.Since(start).Round(time.Millisecond))
					}
					return in, inErr
				}
				for i, s := range sel {
					for _, mode := range []bench.Mode{bench.ModeForward, bench.ModeBackward} {
						mm := measureOne(s.b, sh, op, d, dt, mode, inputs, timing, rep.Ceilings[i])
						rep.Rows = append(rep.Rows, mm)
						if mm.Skipped != "" {
							fmt.Fprintf(stderr, "scanbench: bench %s %s %s %s %s: skipped: %s\n", s.b.Name(), sh.Name, op, dt, mode, mm.Skipped)
						} else {
							fmt.Fprintf(stderr, "scanbench: bench %s %s %s %s %s: median %s (p10 %s, p90 %s, %d runs, %s), %.2f GB/s\n",
								s.b.Name(), sh.Name, op, dt, mode, dur(mm.Median), dur(mm.P10), dur(mm.P90), mm.Runs, mm.Clock, mm.GBps)
						}
					}
				}
			}
		}
	}
	rep.fillSpeedups()
	rep.Fusion = rep.fusion()
	if err := writeJSON(c.out, "scan_bench.json", rep); err != nil {
		return err
	}
	return writeBenchViews(rep, c.out, stdout)
}

// writeBenchViews writes scan_bench.md and scan_bench.png of rep into dir
// and prints its summary.
func writeBenchViews(rep benchReport, dir string, stdout io.Writer) error {
	if err := writeFile(dir, "scan_bench.md", rep.markdown()); err != nil {
		return err
	}
	if err := rep.chart(path(dir, "scan_bench.png")); err != nil {
		return err
	}
	fmt.Fprint(stdout, rep.table())
	fmt.Fprintf(stdout, "wrote %s, %s and %s\n", path(dir, "scan_bench.json"), path(dir, "scan_bench.md"), path(dir, "scan_bench.png"))
	return nil
}

// replot rewrites the Markdown table and the chart of the scan_bench.json
// in dir, without measuring anything.
func replot(dir string, stdout io.Writer) error {
	data, err := os.ReadFile(path(dir, "scan_bench.json"))
	if err != nil {
		return err
	}
	var rep benchReport
	if err := json.Unmarshal(data, &rep); err != nil {
		return fmt.Errorf("%s: %w", path(dir, "scan_bench.json"), err)
	}
	return writeBenchViews(rep, dir, stdout)
}

// eagerSkip is why eager does not run the large shape.
const eagerSkip = "eager is not run at the large shape (minutes per repeat and tens of GiB of host memory on 2 to 16 cores)"

// measureOne measures one row, or says why it is skipped: eager at the
// large shape, a shape the backend does not support (checked before any
// input is drawn), inputs that could not be drawn, or the error of the
// measurement (such as running out of device memory).
func measureOne(b scans.Backend, sh bench.Shape, op scans.Op, d scans.Dims, dt scans.DType, mode bench.Mode,
	inputs func() (*bench.InputSet, error), timing bench.Timing, ceil ceiling) (mm bench.Measurement) {
	bytes, _ := bench.Traffic(op, d, dt, mode)
	skip := func(why string) bench.Measurement {
		return bench.Measurement{Backend: b.Name(), Shape: sh.Name, Op: op, Mode: mode, DType: dt.String(), Dims: d,
			Bytes: bytes, Launches: bench.Launches(mode), Skipped: why}
	}
	if conformance.IsHost(b) && sh.Name == "large" {
		return skip(eagerSkip)
	}
	if err := b.Supports(op, d, dt); err != nil {
		return skip(err.Error())
	}
	in, err := inputs()
	if err != nil {
		return skip("inputs: " + err.Error())
	}
	defer func() {
		if p := recover(); p != nil {
			mm = skip(fmt.Sprintf("panic: %v", p))
		}
	}()
	mm, err = bench.MeasureInputs(b, in, mode, timing)
	if err != nil {
		return skip(err.Error())
	}
	mm.Shape = sh.Name
	mm.SetCeiling(ceil.BytesPerSec, time.Duration(ceil.Latency*1e9))
	return mm
}

// runMemory runs the Givens memory comparison on every backend and writes
// scan_memory.{json,md}.
func runMemory(c config, m bench.Machine, sel []selected, stdout, stderr io.Writer) error {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	rep := memoryReport{Machine: m}
	dt := c.benchDTypes()[0]
	for _, s := range sel {
		r, err := bench.MemoryGivens(s.b, bench.MemoryDims, dt, rng)
		if err != nil {
			r.Backend, r.Dims, r.DType, r.Skipped = s.b.Name(), bench.MemoryDims, dt.String(), err.Error()
		} else {
			timing := bench.DefaultTiming
			if c.quick {
				timing = bench.QuickTiming
			}
			fused, generic, err := bench.GivensPaths(s.b, bench.MemoryDims, dt, timing, rng)
			if err != nil {
				r.Skipped = err.Error()
			} else {
				r.FusedTime, r.GenericTime, r.Clock = fused.Median, generic.Median, fused.Clock
			}
		}
		fmt.Fprintf(stderr, "scanbench: memory %s: fused %d B, generic %d B (%s) %s\n", s.b.Name(), r.Fused, r.Generic, r.Kind, r.Skipped)
		rep.Rows = append(rep.Rows, r)
	}
	if err := writeJSON(c.out, "scan_memory.json", rep); err != nil {
		return err
	}
	if err := writeFile(c.out, "scan_memory.md", rep.markdown()); err != nil {
		return err
	}
	fmt.Fprint(stdout, rep.table())
	fmt.Fprintf(stdout, "wrote %s and %s\n", path(c.out, "scan_memory.json"), path(c.out, "scan_memory.md"))
	return nil
}

// stepShapes are the default shapes of the training-step benchmark, with
// bench.StepSmall after them.
var stepShapes = []string{"lab", "long-T"}

// runStep runs the training-step benchmark on every backend and writes
// scan_step.{json,md}.
func runStep(c config, m bench.Machine, sel []selected, stdout, stderr io.Writer) error {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 17))
	rep := stepReport{Machine: m}
	timing := bench.DefaultTiming
	if c.quick {
		timing = bench.QuickTiming
	}
	var shapes []bench.Shape
	for _, name := range stepShapes {
		sh, err := bench.ShapeByName(name)
		if err != nil {
			return err
		}
		shapes = append(shapes, sh)
	}
	shapes = append(shapes, bench.StepSmall)
	if c.shapesGiven {
		shapes = c.shapes
	}
	for _, sh := range shapes {
		d := sh.Dims(scans.OpLinearScan)
		for _, s := range sel {
			r, err := bench.MeasureStep(s.b, sh.Name, d, scans.F32, timing, rng)
			if err != nil {
				r.Skipped = err.Error()
			}
			fmt.Fprintf(stderr, "scanbench: step %s %s: sync %s, queue %s, kernels %s %s\n",
				s.b.Name(), sh.Name, dur(r.SyncWall), dur(r.QueueWall), dur(r.KernelSum), r.Skipped)
			rep.Rows = append(rep.Rows, r)
		}
	}
	if err := writeJSON(c.out, "scan_step.json", rep); err != nil {
		return err
	}
	if err := writeFile(c.out, "scan_step.md", rep.markdown()); err != nil {
		return err
	}
	fmt.Fprint(stdout, rep.table())
	fmt.Fprintf(stdout, "wrote %s and %s\n", path(c.out, "scan_step.json"), path(c.out, "scan_step.md"))
	return nil
}

// listDevices prints every device of every compiled backend that can list
// them (scans.DeviceLister).
func listDevices(stdout io.Writer) (int, error) {
	for _, b := range compiledBackends() {
		l, ok := b.(scans.DeviceLister)
		if !ok {
			continue
		}
		list, err := l.Devices()
		if err != nil {
			fmt.Fprintf(stdout, "%-7s none: %v\n", b.Name(), err)
			continue
		}
		for _, d := range list {
			cpu := ""
			if d.Software {
				cpu = ", runs on the CPU"
			}
			fmt.Fprintf(stdout, "%-7s %d: %s (%.1f GiB%s)\n", d.Backend, d.Index, d.Name, float64(d.Memory)/(1<<30), cpu)
		}
	}
	return 0, nil
}
