package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
)

// config is the parsed command line.
type config struct {
	check, bench, memory, step bool
	quick                      bool
	defaulted                  bool     // no mode was given: the quick check
	backends                   []string // empty: every available backend
	ops                        []scans.Op
	shapes                     []bench.Shape
	dtypes                     []scans.DType // empty: every type for --check, f32 for --bench
	out                        string
	replot                     string            // a directory whose scan_bench.json to draw again
	seed                       uint64            // 0: from the clock
	shapesGiven                bool              // --shapes was set
	cpuProfile                 string            // --cpuprofile: the file, or ""
	listDevices                bool              // --list-devices
	devices                    map[string]string // --device: backend name to device
	sweep                      []string          // --sweep: the parts ("all": every one); nil: no sweep
}

var errHelp = errors.New("help requested")

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("scanbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&c.check, "check", false, "run the conformance (parity) matrix")
	fs.BoolVar(&c.bench, "bench", false, "run the benchmarks")
	fs.BoolVar(&c.memory, "memory", false, "run the Givens backward memory comparison")
	fs.BoolVar(&c.step, "step", false, "run the training-step benchmark (synchronous calls against one queue)")
	fs.BoolVar(&c.quick, "quick", false, "trimmed matrix (--check), fewer repeats and the lab shape only unless --shapes (--bench)")
	backends := fs.String("backends", "", "comma-separated backends: eager, vulkan, cuda (default: every available one)")
	ops := fs.String("ops", "", "comma-separated operations (default all): "+joinOps())
	shapes := fs.String("shapes", "", "comma-separated benchmark shapes: lab, long-T, large (default all; lab with --quick; lab and long-T for --step)")
	dtypes := fs.String("dtypes", "", "comma-separated element types: f32, f16, bf16 (default all for --check, f32 for --bench and --memory)")
	fs.Uint64Var(&c.seed, "seed", 0, "seed of the --check inputs, to rerun a failing matrix (default: from the clock; every report records it)")
	fs.StringVar(&c.out, "out", "experiments/bench", "directory the result files are written to")
	fs.BoolVar(&c.listDevices, "list-devices", false, "list every device of every compiled backend and exit")
	device := fs.String("device", "", "the device of each GPU backend, as backend=device pairs (vulkan=1, vulkan=radeon, cuda=0): what MINGRU_VK_DEVICE and MINGRU_CUDA_DEVICE take")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the run (go tool pprof) to this file")
	sweep := fs.String("sweep", "", "run the GPU backends' layout sweeps: all, or comma-separated parts ("+sweepPartList()+"); writes sweep-<backend>.tsv")
	fs.StringVar(&c.replot, "replot", "", "rewrite scan_bench.md and scan_bench.png from the scan_bench.json in this directory, measuring nothing")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, errHelp
		}
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q (see --help)", fs.Args())
	}
	if c.replot != "" {
		return c, nil
	}
	for _, pair := range split(*device) {
		name, dev, ok := strings.Cut(pair, "=")
		name = strings.TrimSpace(name)
		if name == "vk" {
			name = "vulkan"
		}
		if !ok || (name != "vulkan" && name != "cuda") || strings.TrimSpace(dev) == "" {
			return c, fmt.Errorf("--device %q: want backend=device, backend vulkan or cuda", pair)
		}
		if c.devices == nil {
			c.devices = map[string]string{}
		}
		c.devices[name] = strings.TrimSpace(dev)
	}
	if c.listDevices {
		return c, nil
	}
	c.sweep = split(*sweep)
	for _, p := range c.sweep {
		if p != "all" && sweepOwner(p) == "" {
			return c, fmt.Errorf("--sweep: no part %q (want all or: %s)", p, sweepPartList())
		}
	}
	if !c.check && !c.bench && !c.memory && !c.step && c.sweep == nil {
		c.check, c.quick, c.defaulted = true, true, true
	}
	c.backends = split(*backends)
	for _, s := range split(*ops) {
		op, err := scans.ParseOp(s)
		if err != nil {
			return c, err
		}
		c.ops = append(c.ops, op)
	}
	for _, s := range split(*dtypes) {
		dt, err := scans.ParseDType(s)
		if err != nil {
			return c, err
		}
		c.dtypes = append(c.dtypes, dt)
	}
	names := split(*shapes)
	c.shapesGiven = len(names) > 0
	if len(names) == 0 {
		names = []string{"lab", "long-T", "large"}
		if c.quick {
			names = []string{"lab"}
		}
	}
	for _, n := range names {
		s, err := bench.ShapeByName(n)
		if err != nil {
			return c, err
		}
		c.shapes = append(c.shapes, s)
	}
	if c.out == "" {
		return c, errors.New("--out must name a directory")
	}
	return c, nil
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func joinOps() string {
	s := make([]string, len(scans.Ops))
	for i, op := range scans.Ops {
		s[i] = string(op)
	}
	return strings.Join(s, ", ")
}

func (c config) opList() []scans.Op {
	if len(c.ops) > 0 {
		return c.ops
	}
	return scans.Ops
}

func (c config) benchDTypes() []scans.DType {
	if len(c.dtypes) > 0 {
		return c.dtypes
	}
	return []scans.DType{scans.F32}
}
