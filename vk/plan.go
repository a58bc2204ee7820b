package vk

import (
	"fmt"

	"github.com/mingru/scans"
)

// The specialization constants of every module, by constant ID.
const (
	specWG       = iota // workgroup size (local_size_x_id)
	specK               // block rows k
	specV               // block columns v
	specChunks          // elementwise kernels: chunks of T per channel
	specTile            // elementwise kernels: channels per workgroup
	specPhase           // block backward: 0 scan, 1 outer products
	specWriteG32        // block backward: also write G in f32
	specAligned         // tiled 16-bit kernels: every word access is whole
	specRing            // row and column layouts of matrix_affine_scan: steps of loads in flight
	specDepth           // subgroup Givens kernels: steps of loads in flight
	specHWF16           // f16 kernels: the exact hardware conversions (hwWiden, hwNarrow)
	specPairs           // subgroup Givens backward: lanes sharing angle words pair in a subgroup
	specAngles          // Givens kernels: the reduction their angles need (angles.Range)
	specCols            // column layout of matrix_affine_scan: columns an invocation (blockCols)
	numSpec
)

// The bits of specHWF16 (constant 10 of shaders/common.glsl).
const (
	hwWiden  = 1 << 0 // unpackHalf2x16 widens every f16 value exactly
	hwNarrow = 1 << 1 // packHalf2x16 rounds every f32 value to nearest even
)

// maxBindings is the number of storage-buffer bindings of the one
// descriptor-set layout every module shares.
const maxBindings = 12

// operand is one binding of a kernel: a tensor or an internal buffer, with
// the number of elements per batch entry (its stride over B) so that it can
// be bound one slice of the batch at a time.
type operand struct {
	buf    *buffer
	stride int64 // elements per batch entry
	esize  int64 // bytes per element
	out    bool  // written by the kernel (poisoned by the test knob)
	poison uint32
}

// kernel is one dispatch of a module over the whole batch; the device
// splits it into slices of the batch when a binding is too large.
type kernel struct {
	module string
	spec   [numSpec]uint32
	flags  uint32 // bit 0: optional initial state bound
	T, N   uint32
	binds  [maxBindings]operand
	// Workgroups for a slice of bs batch entries: bs*groupsPerBatch when
	// groupsPerBatch > 0, else ceil(bs*invPerBatch / WG).
	groupsPerBatch int64
	invPerBatch    int64
	// wordAligned: a tiled 16-bit kernel whose element indices are all
	// even once every bound operand starts at an even element (its rows
	// have an even number of channels, or it is matrix_scan). The device
	// then sets specAligned for each slice whose operands do, which
	// compiles the kernel without the branches for a misaligned word
	// (shaders/common.glsl).
	wordAligned bool
}

func (k *kernel) groups(bs int64) int64 {
	if k.groupsPerBatch > 0 {
		return bs * k.groupsPerBatch
	}
	wg := int64(k.spec[specWG])
	return (bs*k.invPerBatch + wg - 1) / wg
}

// The elementwise layout (linear_scan, parallel_scan_log). A lane is a
// batch entry and a tile of TILE contiguous units (a unit is a channel, or
// two adjacent channels of a 16-bit type, or a 2x2 block of matrix_scan;
// see elementwiseUnits). TILE starts at the smallest power of two >= the
// units of a row, at most 32, and halves, down to minTile, while there are
// fewer than minLanes lanes: with few lanes (long T, small B*D) the
// workgroups would otherwise sit on a few of the device's multiprocessors
// (132 on an H200) with a deep serial chain of segments each, and a
// narrower tile gives more workgroups and room for more chunks per
// workgroup, so fewer segments. (Eight units are still a 32-byte sector per
// row and step.) The workgroup walks T in segments of
// CHUNKS*stepsPerInvocation steps, each invocation holding its
// stepsPerInvocation steps in registers so that every input is read once
// (see shaders/chunks.glsl). The chunk count doubles, starting at 1, while
// all of these hold:
//   - a segment is still shorter than T: chunks*stepsPerInvocation < T;
//   - the device is not yet full: lanes*TILE*chunks*2*per <=
//     targetInvocations (about what a large GPU keeps resident at the
//     register use of these kernels, so that the workgroups run in one
//     wave), per being the channels an invocation carries (unitChannels: 2
//     in the 16-bit linear_scan and parallel_scan_log kernels).
//   - the workgroup TILE*chunks*2 stays within maxElementwiseWG (maxLogWG
//     for parallel_scan_log and the 16-bit linear_scan; see
//     tiledWorkgroupCap) and the device's limit.
//
// At B=16 T=1024 D=64 (f32 linear_scan) the tile is 8 channels and 32
// chunks of 16 steps: 128 workgroups of 256 invocations, T in 2 segments (a
// tile of 32 would give 32 workgroups and 8 segments). DESIGN.md records
// the measurements.
const (
	stepsPerInvocation = 16 // L in shaders/chunks.glsl
	targetInvocations  = 1 << 17
	minLanes           = 128
	minTile            = 8
	maxElementwiseWG   = 256
	maxLogWG           = 512
	blockWG            = 64
	givensWG           = 32
)

// minChunkSteps is the shortest chunk of the block kernels, and
// blockTargetInvocations their device-filling bound. DESIGN.md records the
// measurements.
const (
	minChunkSteps          = 16
	blockTargetInvocations = 1 << 18
)

func elementwiseLayout(B, T, D int, maxWG int) (tile, chunks int) {
	return tiledLayout(B, T, D, tiledWorkgroupCap(scans.OpLinearScan, scans.F32, maxWG), stepsPerInvocation, 1)
}

// tiledWorkgroupCap is the largest workgroup the tiled kernels of op may
// take in element type dt on a device whose limit is maxWG: maxLogWG for
// the log-space scans (parallel_scan_log, mingru_scan) and for the 16-bit
// linear_scan, else maxElementwiseWG.
// DESIGN.md records the measurements.
func tiledWorkgroupCap(op scans.Op, dt scans.DType, maxWG int) int {
	limit := maxElementwiseWG
	if op == scans.OpParallelScanLog || op == scans.OpMingruScan || (op == scans.OpLinearScan && dt.Size() == 2) {
		limit = maxLogWG
	}
	return min(limit, maxWG)
}

// matrixScanSteps is the steps per invocation of the matrix_scan kernels,
// which lay out 2x2 blocks as the elementwise kernels lay out channels
// (a tile of contiguous blocks, segments of T held in registers) with the
// same rule, 8 steps of six inputs per invocation; matrixScanSteps16 is
// that of the 16-bit kernels, which hold 16 steps in the same registers
// (three words of two elements per step).
const (
	matrixScanSteps   = 8
	matrixScanSteps16 = 16
)

// elementwiseUnits is the number of units of a row of n channels (or
// blocks) and the steps per invocation of the tiled kernels: an invocation
// of linear_scan or parallel_scan_log serves one f32 channel or two
// adjacent 16-bit channels (one 32-bit word), an invocation of matrix_scan
// one 2x2 block.
func elementwiseUnits(op scans.Op, dt scans.DType, n int) (units, steps int) {
	if op == scans.OpMatrixScan {
		if dt.Size() == 2 {
			return n, matrixScanSteps16
		}
		return n, matrixScanSteps
	}
	if dt.Size() == 2 {
		return (n + 1) / 2, stepsPerInvocation
	}
	return n, stepsPerInvocation
}

// unitChannels is the number of channels an invocation of the tiled
// kernels of op carries per step in element type dt, as tiledLayout
// counts them against targetInvocations: two for the 16-bit linear_scan
// and parallel_scan_log kernels (one word), else one (a matrix_scan block
// counts as one).
func unitChannels(op scans.Op, dt scans.DType) int {
	if op != scans.OpMatrixScan && dt.Size() == 2 {
		return 2
	}
	return 1
}

// wholeWords reports whether every word a tiled kernel of op loads or
// stores for rows of n channels (or blocks) is whole once each operand
// starts at an even element: a 16-bit type and an even n (an invocation's
// two channels then share one word, and rows start on word boundaries),
// or matrix_scan, whose blocks and vectors have 4 and 2 elements.
func wholeWords(op scans.Op, dt scans.DType, n int) bool {
	return dt.Size() == 2 && (op == scans.OpMatrixScan || n%2 == 0)
}

// tiledLayout is the rule above for steps steps per invocation and
// workgroups of at most maxWG invocations (tiledWorkgroupCap).
func tiledLayout(B, T, D int, maxWG int, steps, per int) (tile, chunks int) {
	tile = 1
	for tile < D && tile < 32 {
		tile *= 2
	}
	lanes := int64(B) * int64((D+tile-1)/tile)
	for tile > minTile && lanes < minLanes {
		tile /= 2
		lanes = int64(B) * int64((D+tile-1)/tile)
	}
	chunks = 1
	for tile*chunks*2 <= maxWG &&
		int64(chunks)*int64(steps) < int64(T) &&
		lanes*int64(tile*chunks*2*per) <= targetInvocations {
		chunks *= 2
	}
	return tile, chunks
}

func moduleName(op scans.Op, dir scans.Direction, dt scans.DType) string {
	d := "fwd"
	if dir == scans.Backward {
		d = "bwd"
	}
	return fmt.Sprintf("%s_%s_%s", op, d, dt)
}

// poisonPattern is a 32-bit word of NaNs of the type.
func poisonPattern(dt scans.DType) uint32 {
	switch dt {
	case scans.F16:
		return 0x7e007e00
	case scans.BF16:
		return 0x7fc07fc0
	}
	return 0x7fc00000
}

// supports is the kernel envelope (see Backend.Supports): the contract's
// (scans.CheckEnvelope) and dimensions that fit the kernels' 32-bit
// indices.
func supports(op scans.Op, d scans.Dims, dt scans.DType) error {
	if err := scans.CheckEnvelope("vulkan", op, d, dt); err != nil {
		return err
	}
	const maxU32 = 1<<32 - 1
	if int64(d.T)+1 > maxU32 || int64(d.N) > maxU32 || int64(d.B) > maxU32 {
		return &scans.ScanFallback{Backend: "vulkan", Op: op, Reason: fmt.Sprintf("a dimension of %v does not fit in 32 bits", d)}
	}
	return nil
}

// evenSlices is the slice size for B batch entries of which at most bs fit
// at once: the fewest slices, of sizes as equal as they can be. A short
// last slice would run alone, a few lanes walking all of T while the rest
// of the device idles (32 entries that fit 31 at a time go as 16 and 16).
func evenSlices(B, bs int64) int64 {
	n := (B + bs - 1) / bs
	return (B + n - 1) / n
}
