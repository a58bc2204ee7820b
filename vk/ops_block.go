package vk

import (
	"fmt"

	"github.com/mingru/scans"
)

func (c *call) block(dir scans.Direction, phase uint32) kernel {
	d := c.dims
	k := kernel{module: moduleName(c.op, dir, c.dt), T: uint32(d.T), N: uint32(d.N)}
	wg, chunks := blockWG, 1
	if c.op == scans.OpGivensScan {
		if k, ok := c.givensSG(dir); ok {
			return k
		}
		wg, chunks = givensLayout(d.B, d.T, d.N, d.K, c.dev.maxWorkgroup(), c.dev.maxSharedMemory())
	}
	cols := 1
	if c.op == scans.OpMatrixAffineScan && phase == 0 {
		cols = c.blockCols()
		wg, chunks = blockLayout(d.B, d.T, d.N, d.K, d.V, cols, c.dev.maxWorkgroup(), c.dev.maxSharedMemory())
		if c.b.cfg.blockChunks > 0 {
			chunks = c.b.cfg.blockChunks
			wg, _ = blockChunkLayout(d.K, d.V, cols, chunks)
		}
		// The ring hides memory latency on a GPU; on a CPU device it
		// would only cost compile time (seconds a pipeline on lavapipe).
		if !c.dev.software {
			k.spec[specRing] = uint32(colRing(d.K, c.dt.Size()))
		}
		if c.b.cfg.colRing > 0 {
			k.spec[specRing] = uint32(c.b.cfg.colRing - 1)
		}
	}
	k.spec[specWG] = uint32(wg)
	k.spec[specK], k.spec[specV] = uint32(d.K), uint32(d.V)
	k.spec[specChunks], k.spec[specTile] = uint32(chunks), 1
	k.spec[specPhase] = phase
	k.spec[specCols] = uint32(cols)
	if phase == 0 {
		k.invPerBatch = int64(d.N) * int64(d.V/cols) * int64(chunks)
	} else {
		k.invPerBatch = int64(d.T) * int64(d.N) * int64(d.K) * int64(d.K)
	}
	return k
}

// rows is the kernel of matrix_affine_scan in the row layout (see
// blockRows): wg/k lanes of k invocations per workgroup (rowWorkgroup).
func (c *call) rows(dir scans.Direction) kernel {
	d := c.dims
	bwd, di, module := dir == scans.Backward, 0, "matrix_affine_scan_rows_fwd_"
	if bwd {
		di, module = 1, "matrix_affine_scan_rows_bwd_"
	}
	k := kernel{module: module + c.dt.String(), T: uint32(d.T), N: uint32(d.N)}
	wg := rowWorkgroup(d.V, c.dt.Size(), bwd, c.dev.maxWorkgroup(), c.dev.maxSharedMemory())
	ring := rowRing(d.K, d.V, c.dt.Size(), bwd)
	if c.b.cfg.rowsWG[di] > 0 {
		wg = c.b.cfg.rowsWG[di]
	}
	if c.b.cfg.rowsRing[di] > 0 {
		ring = c.b.cfg.rowsRing[di]
	}
	k.spec[specWG] = uint32(wg / d.K * d.K)
	k.spec[specK], k.spec[specV] = uint32(d.K), uint32(d.V)
	k.spec[specChunks], k.spec[specTile] = 1, 1
	k.spec[specRing] = uint32(ring)
	k.invPerBatch = int64(d.N) * int64(d.K)
	return k
}

// blockCols is the columns an invocation of the column layout holds: the
// rule's (blockCols in plan.go), or the test knob's.
func (c *call) blockCols() int {
	if n := c.b.cfg.blockCols; n > 0 {
		return n
	}
	return blockCols(c.dt, c.dims.V)
}

// rowLayout says whether matrix_affine_scan runs in the row layout.
func (c *call) rowLayout() bool {
	d := c.dims
	if c.op == scans.OpMatrixAffineScan && c.b.cfg.affineRows != 0 {
		return c.b.cfg.affineRows > 0
	}
	return c.op == scans.OpMatrixAffineScan &&
		blockRows(d.B, d.T, d.N, d.K, d.V, c.blockCols(), c.dev.maxWorkgroup(), c.dev.maxSharedMemory())
}

// givensSG is the kernel of the subgroup Givens layout in direction dir,
// when the device can run it (see givensSGLayout).
func (c *call) givensSG(dir scans.Direction) (kernel, bool) {
	d := c.dims
	width := c.dev.shuffleWidth()
	if c.b.cfg.noSubgroup {
		width = 0
	}
	wg, chunks, depth, ok := givensSGLayout(d.B, d.T, d.N, d.K, width, c.dev.subgroupAlign(), c.dev.maxWorkgroup(), c.dev.maxSharedMemory())
	if !ok {
		return kernel{}, false
	}
	if c.b.cfg.givensChunks > 0 {
		chunks = c.b.cfg.givensChunks
		wg = givensSGChunksWG(wg, d.K, chunks, c.dev.subgroupAlign())
	}
	dn := "fwd"
	if dir == scans.Backward {
		dn = "bwd"
	}
	// The chunked layouts run the kernels built with their chunked passes
	// (givens_scan_sgc_*), CHUNKS = 1 those built without (see
	// shaders/givens_sg.glsl).
	sg := "sg"
	if chunks > 1 {
		sg = "sgc"
	}
	k := kernel{module: fmt.Sprintf("%s_%s_%s_%s", c.op, sg, dn, c.dt), T: uint32(d.T), N: uint32(d.N)}
	k.spec[specWG] = uint32(wg)
	k.spec[specK], k.spec[specV] = uint32(d.K), 1
	k.spec[specChunks], k.spec[specTile] = uint32(chunks), 1
	if dir == scans.Forward {
		depth = givensSGForwardRing(depth, c.dt)
	}
	k.spec[specDepth] = uint32(depth)
	if c.dev.software {
		k.spec[specDepth] = givensSGDepthCPU
	}
	if c.b.cfg.givensDepth > 0 {
		k.spec[specDepth] = uint32(max(c.b.cfg.givensDepth, 2)) // the kernels' pass 1 takes two slots
	}
	// The 16-bit backward stores each word of angle gradients that two
	// lanes share whole, from the lower lane, where the two always meet in
	// one subgroup (see shaders/givens_scan_sg_bwd.comp, PAIRS): T in one chunk, N
	// even (pairs never straddle a batch row), subgroups of k or more
	// invocations and an even number of lanes a workgroup.
	if dir == scans.Backward && c.dt.Size() == 2 && chunks == 1 && d.N%2 == 0 && width >= d.K && (wg/(d.K/2))%2 == 0 {
		k.spec[specPairs] = 1
	}
	k.invPerBatch = int64(d.N) * int64(d.K/2) * int64(chunks)
	// An invocation's pairs of sigma, x, h and their gradients start at
	// an even element (k is even here), so in 16-bit types each is one
	// whole word wherever the operands start at even elements.
	k.wordAligned = c.alignWords() && c.dt.Size() == 2
	return k, true
}

// affineKernel is the kernel of matrix_scan (the tiled elementwise layout
// with 2x2 blocks) or of matrix_affine_scan (the row layout or the block
// layout, see blockRows) in direction dir. The choice of kernel for these
// two operations is made here (and, through rowLayout, nowhere else).
func (c *call) affineKernel(op scans.Op, dir scans.Direction) kernel {
	if op == scans.OpMatrixScan {
		k := c.elementwise(dir)
		k.spec[specK] = 2
		return k
	}
	if c.rowLayout() {
		return c.rows(dir)
	}
	return c.block(dir, 0)
}

// affineForward runs matrix_scan or matrix_affine_scan forward.
func affineForward(c *call, v []*Tensor) ([]scans.Tensor, error) {
	op := c.op
	d := c.dims
	shape := stateShape(op, d)
	out, err := c.output(shape...)
	if err != nil {
		return nil, c.allocErr(err)
	}
	k := c.affineKernel(op, scans.Forward)
	sa, sx, s0 := d.T*d.N*d.K*d.K, d.T*d.N*d.K*d.V, d.N*d.K*d.V
	k.binds[0], k.binds[1], k.binds[2], k.binds[3] = c.in(v[0], sa), c.in(v[1], sx), c.in(v[2], s0), c.out(out, sx)
	if v[2] != nil {
		k.flags = 1
	}
	if err := c.run(k); err != nil {
		return nil, err
	}
	return []scans.Tensor{out}, nil
}

// affineBackward runs matrix_scan or matrix_affine_scan backward.
func affineBackward(c *call, v []*Tensor) ([]scans.Tensor, error) {
	op := c.op
	d := c.dims
	shape := stateShape(op, d)
	aShape := append(append([]int(nil), shape[:3]...), d.K, d.K)
	oA, err := c.output(aShape...)
	if err != nil {
		return nil, c.allocErr(err)
	}
	oX, err := c.output(shape...)
	if err != nil {
		return nil, c.allocErr(err)
	}
	var o0 *Tensor
	if v[2] != nil {
		s0 := append([]int{d.B}, shape[2:]...)
		if o0, err = c.output(s0...); err != nil {
			return nil, c.allocErr(err)
		}
	}
	sa, sx, s0 := d.T*d.N*d.K*d.K, d.T*d.N*d.K*d.V, d.N*d.K*d.V
	k := c.affineKernel(op, scans.Backward)
	k.binds[0], k.binds[1], k.binds[2], k.binds[3] = c.in(v[0], sa), c.in(v[2], s0), c.in(v[3], sx), c.in(v[4], sx)
	k.binds[4], k.binds[5], k.binds[6] = c.out(oA, sa), c.out(oX, sx), c.out(o0, s0)
	if v[2] != nil {
		k.flags = 1
	}
	ks := []kernel{k}
	if d.V > 1 && !c.rowLayout() {
		// The column layout: dA sums over the v columns, held by
		// different invocations, so a second dispatch reads G in f32.
		// (The row layout forms dA in its one pass.)
		g32 := operand{buf: oX.buf, stride: int64(sx), esize: 4}
		if c.dt != scans.F32 {
			buf, err := c.scratchF32(int64(d.B) * int64(sx))
			if err != nil {
				return nil, c.allocErr(err)
			}
			g32 = operand{buf: buf, stride: int64(sx), esize: 4}
			ks[0].spec[specWriteG32] = 1
		}
		ks[0].binds[7] = g32
		k1 := c.block(scans.Backward, 1)
		k1.binds = ks[0].binds
		k1.binds[5].out = false // poisoned once, before the first dispatch
		k1.binds[4].out = false
		k1.binds[6].out = false
		k1.flags = ks[0].flags
		ks = append(ks, k1)
	}
	if err := c.run(ks...); err != nil {
		return nil, err
	}
	return []scans.Tensor{oA, oX, tensorOrNil(o0)}, nil
}

func xName(op scans.Op) string {
	if op == scans.OpMatrixScan {
		return "b"
	}
	return "X"
}

func h0Name(op scans.Op) string {
	if op == scans.OpMatrixScan {
		return "h0"
	}
	return "H0"
}

func stName(op scans.Op) string {
	if op == scans.OpMatrixScan {
		return "h"
	}
	return "H"
}

func stateShape(op scans.Op, d scans.Dims) []int {
	if op == scans.OpMatrixScan {
		return []int{d.B, d.T, d.N, 2}
	}
	return []int{d.B, d.T, d.N, d.K, d.V}
}

// givensForward runs givens_scan's forward on the call's tensors v.
func givensForward(c *call, v []*Tensor) ([]scans.Tensor, error) {
	d := c.dims
	out, err := c.output(d.B, d.T, d.N, d.K)
	if err != nil {
		return nil, c.allocErr(err)
	}
	k := c.block(scans.Forward, 0)
	k.spec[specAngles] = uint32(v[0].angles)
	st, ss, s0 := d.T*d.N*(d.K-1), d.T*d.N*d.K, d.N*d.K
	k.binds[0], k.binds[1], k.binds[2], k.binds[3], k.binds[4] = c.in(v[0], st), c.in(v[1], ss), c.in(v[2], ss), c.in(v[3], s0), c.out(out, ss)
	if v[3] != nil {
		k.flags = 1
	}
	if err := c.run(k); err != nil {
		return nil, err
	}
	return []scans.Tensor{out}, nil
}

// givensBackward runs givens_scan's backward on the call's tensors v.
// It reads only theta, sigma, h0, the forward output h and dh, and
// allocates nothing besides its outputs.
func givensBackward(c *call, v []*Tensor) ([]scans.Tensor, error) {
	d := c.dims
	var outs [4]*Tensor
	var err error
	shapes := [][]int{{d.B, d.T, d.N, d.K - 1}, {d.B, d.T, d.N, d.K}, {d.B, d.T, d.N, d.K}, {d.B, d.N, d.K}}
	for i, s := range shapes {
		if i == 3 && v[3] == nil {
			break
		}
		if outs[i], err = c.output(s...); err != nil {
			return nil, c.allocErr(err)
		}
	}
	k := c.block(scans.Backward, 0)
	k.spec[specAngles] = uint32(v[0].angles)
	st, ss, s0 := d.T*d.N*(d.K-1), d.T*d.N*d.K, d.N*d.K
	k.binds[0], k.binds[1], k.binds[2], k.binds[3], k.binds[4] = c.in(v[0], st), c.in(v[1], ss), c.in(v[3], s0), c.in(v[4], ss), c.in(v[5], ss)
	k.binds[5], k.binds[6], k.binds[7], k.binds[8] = c.out(outs[0], st), c.out(outs[1], ss), c.out(outs[2], ss), c.out(outs[3], s0)
	if v[3] != nil {
		k.flags = 1
	}
	if err := c.run(k); err != nil {
		return nil, err
	}
	return []scans.Tensor{outs[0], outs[1], outs[2], tensorOrNil(outs[3])}, nil
}
