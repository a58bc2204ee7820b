package cuda

import (
	"github.com/mingru/scans"
	"github.com/mingru/scans/internal/angles"
)

// plan is one kernel launch of an operation, worked out from the dims
// alone: which of the operation's arguments the kernel reads, in its
// parameter order, the shapes of the outputs it writes, then its 64-bit
// scalar parameters and the launch geometry. The GPU backend and the
// host emulation of the kernels (emu_test.go) both run plans.
type plan struct {
	op  scans.Op
	dir scans.Direction
	d   scans.Dims
	dt  scans.DType
	// ins indexes the operation's arguments (the forward's inputs, then h
	// and dh for backward, as scans.Backend orders them) that the kernel
	// takes as its leading pointer parameters; an absent optional argument
	// is passed as a null pointer.
	ins []int
	// outs are the shapes of the outputs the kernel writes, after the
	// inputs; nil stands for an output not wanted (dh0 without h0), passed
	// as a null pointer and returned as nil.
	outs    [][]int
	scalars []int64
	grid    int
	bx, by  int
	shared  int  // bytes of dynamic shared memory
	pairs   bool // an elementwise kernel with two channels per thread
	turn    bool // an unchunked Givens kernel for a theta within pi (withTheta)
}

// kernel is the exported name of the plan's kernel: the Givens kernels
// that chunk T (by > 1) have the suffix _chunked, the unchunked Givens
// kernels for a theta within pi _turn, the elementwise kernels with two
// channels per thread _pairs.
func (p *plan) kernel() string {
	name := kernelName(p.op, p.dir, p.d, p.dt)
	if p.op == scans.OpGivensScan && p.by > 1 {
		name += "_chunked"
	}
	if p.turn {
		name += "_turn"
	}
	if p.pairs {
		name += "_pairs"
	}
	return name
}

// withTheta specializes a plan to the class of its theta's values: the
// unchunked Givens forward or backward of a theta whose every angle lies
// within pi runs the _turn kernel, which tests no angle against its fast
// path's bound and, in 16-bit types, leaves out the reduction by 2 pi
// (for such an angle its multiple of 2 pi is 0). Other plans are
// unchanged.
func (p *plan) withTheta(r angles.Range) {
	p.turn = p.op == scans.OpGivensScan && p.by == 1 && r == angles.Turn
}

// module is the PTX module that holds the plan's kernel.
func (p *plan) module() string { return moduleOf(p.op, p.d, p.dt) }

// planFor works out the launch of op in direction dir at d for element
// type dt; init says whether the optional initial state is given, and
// occ is the device's occupancy (it sets the chunk counts). d must be in
// the envelope.
func planFor(op scans.Op, dir scans.Direction, d scans.Dims, dt scans.DType, init bool, occ occupancy) plan {
	p := plan{op: op, dir: dir, d: d, dt: dt, scalars: []int64{int64(d.T), int64(d.N)}}
	B, T, N, K, V := d.B, d.T, d.N, d.K, d.V
	opt := func(shape ...int) []int {
		if !init {
			return nil
		}
		return shape
	}
	bwd := dir == scans.Backward
	switch op {
	case scans.OpLinearScan, scans.OpParallelScanLog, scans.OpMingruScan:
		// One block per (b, tile of 32 x P channels), 32 x C threads, C =
		// chunkCount, 2*C*32*P floats of shared memory (elementwise.cuh).
		// P = 2 (the _pairs kernels) where elementwisePairs says so.
		ch := 1
		if elementwisePairs(op, dir, N, dt) && (op == scans.OpLinearScan && linearPairs(B, T, N, occ) ||
			logScan(op) && logPairs(op, B, T, N, occ)) {
			p.pairs, ch = true, 2
		}
		lanes := B * ((N + tile*ch - 1) / (tile * ch))
		c := elementwiseChunksOf(op, bwd, T, lanes, dt.Size(), ch, occ)
		p.grid, p.bx, p.by, p.shared = lanes, tile, c, 2*c*tile*ch*4
		x := []int{B, T, N}
		switch {
		case op == scans.OpLinearScan && !bwd: // (a, b, h0) -> h
			p.ins, p.outs = []int{0, 1, 2}, [][]int{x}
		case op == scans.OpLinearScan: // (a, h0, h, dh) -> da, db, dh0
			p.ins, p.outs = []int{0, 2, 3, 4}, [][]int{x, x, opt(B, N)}
		case op == scans.OpParallelScanLog && !bwd: // (lc, lv) -> h
			p.ins, p.outs = []int{0, 1}, [][]int{x}
		case op == scans.OpParallelScanLog: // (lc, lv, h, dh) -> dlc, dlv
			p.ins, p.outs = []int{0, 1, 2, 3}, [][]int{x, {B, T + 1, N}}
		case !bwd: // mingru_scan: (k, x, h0) -> h
			p.ins, p.outs = []int{0, 1, 2}, [][]int{x}
		default: // mingru_scan: (k, x, h0, h, dh) -> dk, dx, dh0
			p.ins, p.outs = []int{0, 1, 2, 3, 4}, [][]int{x, x, opt(B, N)}
		}
	case scans.OpMatrixScan:
		// One block of W x C threads per (b, tile of W contiguous n), W =
		// affineTile, C = chunkCount: the chunks of a segment held in
		// registers, 6*C*W floats of aggregates (matrix_scan.cu).
		w, c := matrixScanLayoutOf(B, T, N, dt, bwd, occ)
		p.grid, p.bx, p.by, p.shared = B*((N+w-1)/w), w, c, matrixScanShared(w, c)
		x := []int{B, T, N, 2}
		if !bwd { // (A, b, h0) -> h
			p.ins, p.outs = []int{0, 1, 2}, [][]int{x}
		} else { // (A, h0, h, dh) -> dA, db, dh0
			p.ins, p.outs = []int{0, 2, 3, 4}, [][]int{{B, T, N, 2, 2}, x, opt(B, N, 2)}
		}
	case scans.OpMatrixAffineScan:
		// V > 1: one block of V x C threads per (b, n). V = 1: one block
		// of W x C threads per (b, tile of W contiguous n), W =
		// affineTile. C chunks of T where affineChunkable (affine.cuh).
		w, width, lanes := 1, V, B*N
		if V == 1 {
			w = affineTile(B, N, occ)
			width, lanes = w, B*((N+w-1)/w)
		}
		c := 1
		if affineChunkable(K, V) {
			c = chunkCount(T, minChunk, lanes, width, occ, func(c int) bool {
				return affineShared(K, V, w, c, bwd) <= maxShared && width*c <= affineMaxThreads(K, V)
			})
		}
		p.grid, p.bx, p.by, p.shared = lanes, width, c, affineShared(K, V, w, c, bwd)
		if affineRowsFit(K, V, dt.Size(), bwd) && (c == 1 || affineRows(B*N, K, occ)) {
			// The row layout (affine_fwd_rows, affine_bwd_rows where
			// AFFINE_ROWS_BWD): R lanes of K threads per block, every
			// input read once.
			r := affineRowLanes(B*N, K)
			p.grid, p.bx, p.by, p.shared = B*N/r, r*K, 1, affineRowShared(K, V, r, dt.Size(), bwd)
		}
		A, X := []int{B, T, N, K, K}, []int{B, T, N, K, V}
		h0 := opt(B, N, K, V)
		if !bwd { // (A, X, H0) -> H
			p.ins, p.outs = []int{0, 1, 2}, [][]int{X}
		} else { // (A, H0, H, dH) -> dA, dX, dH0
			p.ins, p.outs = []int{0, 2, 3, 4}, [][]int{A, X, h0}
		}
	case scans.OpGivensScan:
		// One block of W*K threads per (b, tile of W contiguous n), W =
		// givensTile, one thread per channel walking all of T; or, where
		// givensChunks cuts T into C > 1 chunks, one block of W*K x C
		// threads per (b, tile of W contiguous n), W = givensChunkTile,
		// with each thread's chunk aggregate, k+1 floats, in shared
		// memory (givens_scan.cu).
		if c := givensChunksOf(B, T, N, K, occ); c > 1 {
			w := givensChunkTile(K, c)
			p.grid, p.bx, p.by, p.shared = B*((N+w-1)/w), w*K, c, 4*w*K*c*(K+1)
		} else {
			w := givensTileOf(B, N, K, occ)
			p.grid, p.bx, p.by, p.shared = B*((N+w-1)/w), w*K, 1, 0
			if bwd && dt == scans.F32 {
				p.shared = givensStageBytes(w * K)
			}
		}
		x := []int{B, T, N, K}
		if !bwd { // (theta, sigma, x, h0) -> h
			p.ins, p.outs = []int{0, 1, 2, 3}, [][]int{x}
		} else { // (theta, sigma, h0, h, dh) -> dtheta, dsigma, dx, dh0
			p.ins, p.outs = []int{0, 1, 3, 4, 5}, [][]int{{B, T, N, K - 1}, x, x, opt(B, N, K)}
		}
	}
	return p
}

// initArg is the index of op's optional initial state among its
// arguments, or -1 when it has none.
func initArg(op scans.Op) int {
	if spec := scans.Spec(op); spec != nil {
		return spec.InitArg()
	}
	return -1
}

// argNames are the names of op's arguments in order, for errors: the
// forward's inputs, then the output and its gradient for backward.
func argNames(op scans.Op, dir scans.Direction) []string {
	if spec := scans.Spec(op); spec != nil {
		return spec.ArgNames(dir)
	}
	return nil
}
