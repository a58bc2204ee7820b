package conformance

import (
	"fmt"
	"slices"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
)

// Case is one conformance check: an operation in one direction at one
// shape, element type and input regime.
type Case struct {
	Op     scans.Op
	Dir    scans.Direction
	Dims   scans.Dims
	DType  scans.DType
	Regime bench.Regime
	// Init is whether the optional initial state (h0, H0) is given; it is
	// ignored for parallel_scan_log, which has none.
	Init bool
	// OutOfEnvelope marks shapes the GPU kernels do not serve (k = 3,
	// v = 5, an odd or too large Givens block, ...): a GPU backend must
	// decline them with *scans.ScanFallback, from Supports and from the
	// operation; a host backend computes them like any other case.
	OutOfEnvelope bool
}

// Name identifies the case, for example
// "matrix_affine_scan/backward/f16/k8,v4/T65", with "/noinit" when the
// initial state is absent, "/even" for the elementwise rows with an even
// number of channels, "/long" for the long-memory regime and "/fallback"
// for a shape outside the envelope.
func (c Case) Name() string {
	s := fmt.Sprintf("%s/%s/%v/k%d,v%d/T%d", c.Op, c.Dir, c.DType, c.Dims.K, c.Dims.V, c.Dims.T)
	if bench.HasInit(c.Op) && !c.Init {
		s += "/noinit"
	}
	if c.Dims.N == confDEven && elementwise(c.Op) {
		s += "/even"
	}
	if c.Regime == bench.LongMemory {
		s += "/long"
	}
	if c.OutOfEnvelope {
		s += "/fallback"
	}
	return s
}

// InEnvelope reports whether the GPU kernels serve op at d: k, v in
// {1, 2, 4, 8, 16} for matrix_affine_scan, k in {2, 4, 8, 16} for
// givens_scan; the other operations have fixed block sizes.
func InEnvelope(op scans.Op, d scans.Dims) bool {
	switch op {
	case scans.OpMatrixAffineScan:
		return scans.InEnvelope(d.K) && scans.InEnvelope(d.V)
	case scans.OpGivensScan:
		return d.K >= 2 && scans.InEnvelope(d.K)
	}
	return true
}

// The small, odd batch and block counts of the conformance matrix: large
// enough to catch lanes that overwrite each other and partial tiles, small
// enough that the full matrix runs on a CPU Vulkan device in minutes.
const (
	confB     = 3
	confN     = 5  // blocks for the block ops
	confNBig  = 3  // blocks when k*k*v >= 512
	confD     = 67 // channels for the elementwise ops: crosses 64, not a multiple of 2
	confDEven = 66 // and a multiple of 2 (kernels that take two channels at once)
	confLongB = 2
)

// Cases lists the conformance matrix. Every operation, in both
// directions, at every element type, at every block size of the envelope
// (k, v in {1,2,4,8,16}^2 for matrix_affine_scan, k in {2,4,8,16} for
// givens_scan), at T in {1, 2, 3, 63, 64, 65, 1000}; the initial state
// absent in about a third of the rows. Then rows outside the envelope
// (k = 3, v = 5, Givens k = 6, ...), and long-memory rows in f32 at
// T = 1000 and 4096.
//
// quick keeps every operation, direction and element type but trims T to
// {1, 65, 1000}, the (k, v) pairs to five and the Givens blocks to three,
// and the long-memory rows to T = 1000.
func Cases(quick bool) []Case {
	Ts := []int{1, 2, 3, 63, 64, 65, 1000}
	kvs := [][2]int{}
	for _, k := range scans.Envelope {
		for _, v := range scans.Envelope {
			kvs = append(kvs, [2]int{k, v})
		}
	}
	givensK := []int{2, 4, 8, 16}
	longTs := []int{1000, 4096}
	if quick {
		Ts = []int{1, 65, 1000}
		kvs = [][2]int{{1, 1}, {2, 1}, {1, 16}, {8, 8}, {16, 4}}
		givensK = []int{2, 8, 16}
		longTs = []int{1000}
	}
	var cases []Case
	add := func(op scans.Op, K, V int, dt scans.DType, r bench.Regime, Ts []int, B int, oob bool) {
		for ti, T := range Ts {
			d := scans.Dims{B: B, T: T, N: confN, K: K, V: V}
			if K*K*V >= 512 {
				d.N = confNBig // keeps the k = 8 and 16 rows fast on the host
			}
			Ns := []int{d.N}
			if elementwise(op) {
				Ns = []int{confD}
				if r == bench.Typical {
					Ns = append(Ns, confDEven)
				}
			}
			for _, n := range Ns {
				d.N = n
				for _, dir := range []scans.Direction{scans.Forward, scans.Backward} {
					cases = append(cases, Case{
						Op: op, Dir: dir, Dims: d, DType: dt, Regime: r,
						Init:          ti%3 != 1,
						OutOfEnvelope: oob,
					})
				}
			}
		}
	}
	for _, dt := range scans.DTypes {
		add(scans.OpLinearScan, 1, 1, dt, bench.Typical, Ts, confB, false)
		add(scans.OpMatrixScan, 2, 1, dt, bench.Typical, Ts, confB, false)
		for _, kv := range kvs {
			add(scans.OpMatrixAffineScan, kv[0], kv[1], dt, bench.Typical, Ts, confB, false)
		}
		add(scans.OpParallelScanLog, 1, 1, dt, bench.Typical, Ts, confB, false)
		for _, k := range givensK {
			add(scans.OpGivensScan, k, 1, dt, bench.Typical, Ts, confB, false)
		}
		add(scans.OpMingruScan, 1, 1, dt, bench.Typical, Ts, confB, false)
	}
	// Outside the envelope: a GPU backend must decline, never compute.
	oobT := []int{5}
	for _, dt := range []scans.DType{scans.F32, scans.F16} {
		for _, kv := range [][2]int{{3, 5}, {3, 1}, {1, 5}, {5, 2}, {32, 1}} {
			add(scans.OpMatrixAffineScan, kv[0], kv[1], dt, bench.Typical, oobT, confB, true)
		}
		for _, k := range []int{6, 3, 32} {
			add(scans.OpGivensScan, k, 1, dt, bench.Typical, oobT, confB, true)
		}
	}
	// Long memory, against the float64 reference.
	add(scans.OpLinearScan, 1, 1, scans.F32, bench.LongMemory, longTs, confLongB, false)
	add(scans.OpMatrixScan, 2, 1, scans.F32, bench.LongMemory, longTs, confLongB, false)
	for _, kv := range [][2]int{{4, 4}, {16, 16}} {
		add(scans.OpMatrixAffineScan, kv[0], kv[1], scans.F32, bench.LongMemory, longTs, confLongB, false)
	}
	add(scans.OpParallelScanLog, 1, 1, scans.F32, bench.LongMemory, longTs, confLongB, false)
	for _, k := range []int{2, 16} {
		add(scans.OpGivensScan, k, 1, scans.F32, bench.LongMemory, longTs, confLongB, false)
	}
	add(scans.OpMingruScan, 1, 1, scans.F32, bench.LongMemory, longTs, confLongB, false)
	return cases
}

// elementwise reports whether op scans one value per channel (D channels,
// no blocks).
func elementwise(op scans.Op) bool {
	return op == scans.OpLinearScan || op == scans.OpParallelScanLog || op == scans.OpMingruScan
}

// FilterCases keeps the cases whose operation is in ops and whose element
// type is in dtypes; an empty list keeps all.
func FilterCases(cases []Case, ops []scans.Op, dtypes []scans.DType) []Case {
	var out []Case
	for _, c := range cases {
		if len(ops) > 0 && !slices.Contains(ops, c.Op) {
			continue
		}
		if len(dtypes) > 0 && !slices.Contains(dtypes, c.DType) {
			continue
		}
		out = append(out, c)
	}
	return out
}
