package conformance

import (
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/eager"
	"github.com/mingru/scans/reference"
)

// TestConformanceReferenceVsEager runs the quick matrix with eager as the
// reference of the float64 backend: the direction a GPU backend is checked
// in, with a backend that is not eager under test.
func TestConformanceReferenceVsEager(t *testing.T) {
	cases := FilterCases(Cases(true), []scans.Op{scans.OpLinearScan, scans.OpParallelScanLog, scans.OpGivensScan}, []scans.DType{scans.F16})
	rows := Parity(reference.New(), eager.New(), cases, nil)
	for _, r := range rows {
		if !r.Pass {
			t.Errorf("%s", r.Summary())
		}
		if r.Regime == bench.Typical && r.Reference != "eager" {
			t.Errorf("%s: compared with %s, want eager", r.Case, r.Reference)
		}
		if r.Regime == bench.LongMemory && r.Reference != reference.Name {
			t.Errorf("%s: compared with %s, want %s", r.Case, r.Reference, reference.Name)
		}
	}
}

// wrong wraps eager and breaks it in one chosen way. Its name is not
// "eager", so the harness treats it as a GPU backend.
type wrong struct {
	scans.Backend
	name string
	// corrupt, when set, changes the n-th downloaded tensor (n counts
	// from 0 across the backend's life).
	corrupt   func(n int, h *scans.Host)
	downloads atomic.Int64
	// dropDH0 makes the linear backward return no dh0.
	dropDH0 bool
	// fallback makes Supports decline everything, and linear_scan's
	// forward decline too, with *scans.ScanFallback; the other operations
	// compute.
	fallback bool
}

func (w *wrong) Name() string { return w.name }

func (w *wrong) Download(t scans.Tensor) (*scans.Host, error) {
	h, err := w.Backend.Download(t)
	if err != nil || w.corrupt == nil {
		return h, err
	}
	h = h.Clone()
	w.corrupt(int(w.downloads.Add(1)-1), h)
	return h, nil
}

func (w *wrong) Supports(op scans.Op, d scans.Dims, dt scans.DType) error {
	if w.fallback {
		return &scans.ScanFallback{Backend: w.name, Op: op, Reason: "declines everything"}
	}
	return w.Backend.Supports(op, d, dt)
}

func (w *wrong) Run(c *scans.Call) ([]scans.Tensor, error) {
	if w.fallback && c.Op == scans.OpLinearScan && c.Dir == scans.Forward {
		return nil, &scans.ScanFallback{Backend: w.name, Op: c.Op, Reason: "declines everything"}
	}
	out, err := w.Backend.Run(c)
	if err == nil && w.dropDH0 && c.Op == scans.OpLinearScan && c.Dir == scans.Backward {
		out[2] = nil
	}
	return out, err
}

func inEnvelope(cases []Case) []Case {
	var out []Case
	for _, c := range cases {
		if !c.OutOfEnvelope {
			out = append(out, c)
		}
	}
	return out
}

func TestHarnessFailsWrongBackends(t *testing.T) {
	cases := inEnvelope(Cases(true))
	// One linear and one Givens case in each direction, f32 and bf16, with
	// the initial state: small, and every output kind.
	var pick []Case
	for _, c := range cases {
		if (c.Op == scans.OpLinearScan || c.Op == scans.OpGivensScan && c.Dims.K == 8) && c.Dims.T == 65 &&
			(c.DType == scans.F32 || c.DType == scans.BF16) && c.Regime == bench.Typical && c.Dims.N != confDEven {
			c.Init = true
			pick = append(pick, c)
		}
	}
	if len(pick) != 8 {
		t.Fatalf("picked %d cases, want 8", len(pick))
	}
	perturb := func(n int, h *scans.Host) { // one element, by 5% of (1+|v|)
		i := h.Len() / 2
		v := h.At(i)
		h.Set(i, v+0.05*(1+float32(math.Abs(float64(v)))))
	}
	lastOnly := func(n int, h *scans.Host) { // only the 4th download of a Givens backward: dh0
		if n == 3 {
			h.Set(h.Len()-1, h.At(h.Len()-1)+0.05*(1+float32(math.Abs(float64(h.At(h.Len()-1))))))
		}
	}
	tests := []struct {
		name  string
		b     *wrong
		cases []Case
		want  string // in the error text
	}{
		{"perturbed", &wrong{corrupt: perturb}, pick, "outside the gate"},
		{"NaN", &wrong{corrupt: func(n int, h *scans.Host) { h.Set(n%h.Len(), float32(math.NaN())) }}, pick, "outside the gate"},
		{"Inf", &wrong{corrupt: func(n int, h *scans.Host) { h.Set(0, float32(math.Inf(1))) }}, pick, "outside the gate"},
		{"dh0 only", &wrong{corrupt: lastOnly}, pick[7:8], "dh0"},
		{"missing dh0", &wrong{dropDH0: true}, pick[1:2], "got nil"},
		{"needless fallback", &wrong{fallback: true}, pick[0:1], "ScanFallback"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.b.Backend, tc.b.name = eager.New(), "broken"
			if tc.name == "dh0 only" && (tc.cases[0].Op != scans.OpGivensScan || tc.cases[0].Dir != scans.Backward) {
				t.Fatalf("case %s is not a Givens backward", tc.cases[0].Name())
			}
			rows := Parity(tc.b, eager.New(), tc.cases, nil)
			for _, r := range rows {
				if r.Pass {
					t.Errorf("%s: passed a broken backend: %s", tc.name, r.Summary())
				} else if !strings.Contains(r.Err, tc.want) {
					t.Errorf("%s: error %q does not mention %q", tc.name, r.Err, tc.want)
				}
			}
		})
	}
}

// TestHarnessFailsComputedFallback: a GPU backend that computes a shape
// outside the envelope instead of declining it fails, even when its
// numbers are right; eager (a host backend) computes the same rows and
// passes.
func TestHarnessFailsComputedFallback(t *testing.T) {
	var oob []Case
	for _, c := range Cases(true) {
		if c.OutOfEnvelope {
			oob = append(oob, c)
		}
	}
	if len(oob) == 0 {
		t.Fatal("no out-of-envelope cases")
	}
	for _, r := range Parity(&wrong{Backend: eager.New(), name: "gpu-like"}, eager.New(), oob, nil) {
		if r.Pass || !r.FallbackExpected || r.FallbackGot {
			t.Errorf("computed fallback row passed or was misread: %+v", r)
		}
	}
	for _, r := range Parity(eager.New(), nil, oob, nil) {
		if !r.Pass || r.FallbackExpected {
			t.Errorf("eager on an out-of-envelope row: %s", r.Summary())
		}
	}
	// Supports declining is not enough: the operation must decline too.
	for _, r := range Parity(&wrong{Backend: eager.New(), name: "gpu-like", fallback: true}, eager.New(), oob, nil) {
		if r.Pass || !strings.Contains(r.Err, "computed a shape outside the envelope") {
			t.Errorf("Supports declined but the operation computed: %s", r.Summary())
		}
	}
}

func TestCompare(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		got, want  []float64
		atol, rtol float64
		bad        int
	}{
		{[]float64{1, 2, 3}, []float64{1, 2, 3}, 0, 0, 0},
		{[]float64{1 + 1e-6, 2}, []float64{1, 2}, 1e-5, 0, 0},
		{[]float64{1 + 2e-5, 2}, []float64{1, 2}, 1e-5, 0, 1},
		{[]float64{101, 2}, []float64{100, 2}, 0, 0.011, 0},
		{[]float64{nan, 2}, []float64{1, 2}, 1e9, 1e9, 1},
		{[]float64{nan}, []float64{nan}, 0, 0, 0},
		{[]float64{1}, []float64{nan}, 1e9, 0, 1},
		{[]float64{inf}, []float64{inf}, 0, 0, 0},
		{[]float64{inf}, []float64{-inf}, 1e9, 1e9, 1},
		{[]float64{inf}, []float64{1e30}, 1e9, 1e9, 1},
		{[]float64{1, 2}, []float64{1}, 1, 1, 1},
	}
	for i, tc := range tests {
		d := Compare(tc.got, tc.want, tc.atol, tc.rtol)
		if d.Bad != tc.bad {
			t.Errorf("case %d: Compare(%v, %v, %g, %g) bad = %d, want %d", i, tc.got, tc.want, tc.atol, tc.rtol, d.Bad, tc.bad)
		}
		if d.Pass() != (tc.bad == 0) {
			t.Errorf("case %d: Pass = %v", i, d.Pass())
		}
	}
}

func TestGate(t *testing.T) {
	tests := []struct {
		op         scans.Op
		dir        scans.Direction
		dt         scans.DType
		atol, rtol float64
	}{
		{scans.OpLinearScan, scans.Forward, scans.F32, 1e-5, 0},
		{scans.OpMatrixScan, scans.Backward, scans.F32, 1e-3, 0},
		{scans.OpMatrixAffineScan, scans.Forward, scans.F16, 1e-5, 1.0 / 1024},
		{scans.OpParallelScanLog, scans.Forward, scans.F32, 1e-4, 1e-4},
		{scans.OpParallelScanLog, scans.Backward, scans.BF16, 1e-3, 1e-3 + 1.0/128},
		{scans.OpGivensScan, scans.Forward, scans.F32, 1e-5, 0},
		{scans.OpGivensScan, scans.Backward, scans.F32, 1e-3, 1e-3},
	}
	for _, tc := range tests {
		a, r := Gate(tc.op, tc.dir, tc.dt)
		if math.Abs(a-tc.atol) > 1e-15 || math.Abs(r-tc.rtol) > 1e-15 {
			t.Errorf("Gate(%s, %s, %v) = (%g, %g), want (%g, %g)", tc.op, tc.dir, tc.dt, a, r, tc.atol, tc.rtol)
		}
	}
	if got := LongMemoryAtol(1000, []float64{-3, 2, math.Inf(1)}); math.Abs(got-2*1000*3/float64(1<<24)) > 1e-18 {
		t.Errorf("LongMemoryAtol = %g", got)
	}
}

func TestCasesCover(t *testing.T) {
	for _, quick := range []bool{true, false} {
		cases := Cases(quick)
		type key struct {
			op  scans.Op
			dir scans.Direction
			dt  scans.DType
		}
		seen := map[key]bool{}
		inits := map[scans.Op]map[bool]bool{}
		var oob, long int
		names := map[string]bool{}
		for _, c := range cases {
			if names[c.Name()] {
				t.Errorf("quick=%v: duplicate case %s", quick, c.Name())
			}
			names[c.Name()] = true
			seen[key{c.Op, c.Dir, c.DType}] = true
			if inits[c.Op] == nil {
				inits[c.Op] = map[bool]bool{}
			}
			inits[c.Op][c.Init] = true
			if c.OutOfEnvelope {
				oob++
				if InEnvelope(c.Op, c.Dims) {
					t.Errorf("%s marked out of envelope but is in it", c.Name())
				}
			} else if !InEnvelope(c.Op, c.Dims) {
				t.Errorf("%s is out of the envelope but not marked", c.Name())
			}
			if c.Regime == bench.LongMemory {
				long++
			}
		}
		for _, op := range scans.Ops {
			for _, dir := range []scans.Direction{scans.Forward, scans.Backward} {
				for _, dt := range scans.DTypes {
					if !seen[key{op, dir, dt}] {
						t.Errorf("quick=%v: no case for %s %s %v", quick, op, dir, dt)
					}
				}
			}
			if bench.HasInit(op) && !(inits[op][true] && inits[op][false]) {
				t.Errorf("quick=%v: %s is not covered with and without the initial state", quick, op)
			}
		}
		if oob == 0 || long == 0 {
			t.Errorf("quick=%v: %d out-of-envelope and %d long-memory cases", quick, oob, long)
		}
		t.Logf("quick=%v: %d cases (%d out of envelope, %d long memory)", quick, len(cases), oob, long)
	}
}

func TestCheckCaseRecoversPanics(t *testing.T) {
	c := Case{Op: scans.OpLinearScan, Dir: scans.Forward, Dims: scans.Dims{B: 1, T: 2, N: 3}, DType: scans.F32, Regime: bench.Typical, Init: true}
	r := CheckCase(&wrong{Backend: eager.New(), name: "panicky", corrupt: func(int, *scans.Host) { panic("boom") }}, nil, c, 1)
	if r.Pass || !strings.Contains(r.Err, "boom") {
		t.Errorf("panicking backend: %s", r.Summary())
	}
}
