package vk

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/mingru/scans"
)

// SweepParts are the parts of Sweep, in the order they run:
//
//   - long: linear_scan, parallel_scan_log and matrix_scan at the long-T
//     shape, f32, forward and forward+backward, under tiles of 8 to 32
//     units and every chunk count the device allows;
//   - long16: linear_scan and parallel_scan_log at the long-T shape in
//     f16 and bf16 under tiles of 4 to 16 units and 16 to 128 chunks;
//   - large: the forwards of linear_scan and parallel_scan_log at the
//     large shape in every element type, tiles of 32 units, up to 16
//     chunks;
//   - aligned: the 16-bit forwards at the large shape compiled for whole
//     words and not;
//   - givens: givens_scan (f32) at the lab, long-T and large shapes, the
//     kernels without subgroup operations ("fallback") and the subgroup
//     kernels at ring depths 4 and 16 under every chunk count that keeps
//     8 steps a chunk ("sg-d4", "sg-d16");
//   - givens16: the givens_scan forward at the large shape in every
//     element type under ring depths 2 to 32;
//   - rows: matrix_affine_scan (f32) in the row layout at the lab and
//     large shapes under workgroups of 32 to 128 invocations and rings of
//     2 to 8 steps (the workgroup as the tile, the ring as the chunks);
//   - affine-long: matrix_affine_scan (f32) at the long-T shape in the
//     row layout under workgroups of 32 and 64 invocations ("rows") and
//     in the column layout under every chunk count that fits a workgroup
//     ("columns", "columns2": one and two columns an invocation);
//   - affine-long16: the column layout of affine-long in every element
//     type, from 8 chunks, and at the rule's chunks under rings of 0 to 8
//     steps ("columns-r<ring>").
var SweepParts = []string{"long", "long16", "large", "aligned", "givens", "givens16", "rows", "affine-long", "affine-long16"}

// SweepHeader is the header line of Sweep's output.
const SweepHeader = "shape\top\tmode\tdtype\tkernel\ttile\tchunks\taligned\trule\tmedian_us"

// Sweep is a layout experiment: it times the kernels under layouts other
// than the ones the backend's rules choose, so that the rules can be
// checked on a new device. It runs the parts of SweepParts named in parts
// (all when parts is empty) with timer and writes w a comment line naming
// the device, SweepHeader, and one tab-separated row per timing, as it
// goes: the row of the rule's own layout says so in its rule column. A
// timing that fails is written as a comment line and the sweep goes on;
// the errors are returned together at the end.
//
// It sets the layouts of b while it runs and puts them back when it
// returns: make no other call on b meanwhile. On an NVIDIA GPU the clocks
// stay low for a process that only submits Vulkan work in short bursts:
// sweep while some process holds a CUDA context (scanbench's CUDA backend
// does), or every row comes out several times slower.
func (b *Backend) Sweep(w io.Writer, parts []string, timer scans.LayoutTimer) (err error) {
	defer recoverTo("sweep", &err)
	for _, p := range parts {
		if !slices.Contains(SweepParts, p) {
			return fmt.Errorf("vulkan: sweep: no part %q (want one of %v)", p, SweepParts)
		}
	}
	if len(parts) == 0 {
		parts = SweepParts
	}
	d, err := b.device()
	if err != nil {
		return b.unavailable()
	}
	saved := b.cfg
	defer func() { b.cfg = saved }()
	s := &sweep{b: b, d: d, w: w, timer: timer, kernel: "tiled"}
	if _, err := fmt.Fprintf(w, "# %s\n%s\n", b.Status().Device, SweepHeader); err != nil {
		return err
	}
	for _, p := range parts {
		if err := s.part(p); err != nil {
			return errors.Join(append(s.errs, err)...)
		}
		s.kernel = "tiled"
	}
	return errors.Join(s.errs...)
}

// sweep is one Sweep in progress.
type sweep struct {
	b      *Backend
	d      *device
	w      io.Writer
	timer  scans.LayoutTimer
	kernel string // the kernel column of the rows
	errs   []error
}

var tiledOps = []scans.Op{scans.OpLinearScan, scans.OpParallelScanLog, scans.OpMatrixScan}

func modeName(bwd bool) string {
	if bwd {
		return "forward+backward"
	}
	return "forward"
}

// row times op under the backend's configuration now and writes its row;
// an error writing w ends the sweep, a failed timing does not.
func (s *sweep) row(shape string, op scans.Op, dims scans.Dims, dt scans.DType, bwd bool, tile, chunks int, rule bool) error {
	med, err := s.timer.Time(s.b, op, dims, dt, bwd)
	if err != nil {
		err = fmt.Errorf("%s %s %s %s %s tile %d chunks %d: %w", shape, op, modeName(bwd), dt, s.kernel, tile, chunks, err)
		s.errs = append(s.errs, err)
		_, werr := fmt.Fprintf(s.w, "# %v\n", err)
		return werr
	}
	_, err = fmt.Fprintf(s.w, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%v\t%v\t%.2f\n", shape, op, modeName(bwd), dt, s.kernel, tile, chunks,
		!s.b.cfg.noAlignWords, rule, float64(med.Nanoseconds())/1e3)
	return err
}

// tiled times op with the tiled layout set to tile and chunks.
func (s *sweep) tiled(shape string, op scans.Op, dims scans.Dims, dt scans.DType, bwd bool, tile, chunks int) error {
	s.b.cfg.tiledLayout = func(int, int, int, int, int, int) (int, int) { return tile, chunks }
	defer func() { s.b.cfg.tiledLayout = nil }()
	return s.row(shape, op, dims, dt, bwd, tile, chunks, false)
}

// ruleTiled is the tiled rule's layout for op at dims in dt.
func (s *sweep) ruleTiled(op scans.Op, dims scans.Dims, dt scans.DType) (tile, chunks, steps int) {
	units, steps := elementwiseUnits(op, dt, dims.N)
	tile, chunks = tiledLayout(dims.B, dims.T, units, tiledWorkgroupCap(op, dt, s.d.maxWorkgroup()), steps, unitChannels(op, dt))
	return tile, chunks, steps
}

// grid times op at dims under the rule's layout, then every tile width of
// tiles and chunk count from minChunks up to maxChunks, the device's
// workgroup limit and twice the chunks that cover T.
func (s *sweep) grid(shape string, op scans.Op, dims scans.Dims, dt scans.DType, bwd bool, tiles []int, minChunks, maxChunks int) error {
	rt, rc, steps := s.ruleTiled(op, dims, dt)
	if err := s.row(shape, op, dims, dt, bwd, rt, rc, true); err != nil {
		return err
	}
	for _, tile := range tiles {
		for chunks := minChunks; chunks <= maxChunks && tile*chunks <= s.d.maxWorkgroup() && chunks*steps <= 2*dims.T; chunks *= 2 {
			if tile == rt && chunks == rc {
				continue
			}
			if err := s.tiled(shape, op, dims, dt, bwd, tile, chunks); err != nil {
				return err
			}
		}
	}
	return nil
}

// part runs one part of the sweep.
func (s *sweep) part(name string) error {
	both := []bool{false, true}
	switch name {
	case "long":
		for _, op := range tiledOps {
			d, err := s.timer.Dims("long-T", op)
			if err != nil {
				return err
			}
			for _, bwd := range both {
				if err := s.grid("long-T", op, d, scans.F32, bwd, []int{8, 16, 32}, 1, 1024); err != nil {
					return err
				}
			}
		}
	case "long16":
		for _, op := range tiledOps[:2] {
			d, err := s.timer.Dims("long-T", op)
			if err != nil {
				return err
			}
			for _, dt := range []scans.DType{scans.F16, scans.BF16} {
				for _, bwd := range both {
					if err := s.grid("long-T", op, d, dt, bwd, []int{4, 8, 16}, 16, 128); err != nil {
						return err
					}
				}
			}
		}
	case "large":
		for _, op := range tiledOps[:2] {
			d, err := s.timer.Dims("large", op)
			if err != nil {
				return err
			}
			for _, dt := range scans.DTypes {
				if err := s.grid("large", op, d, dt, false, []int{32}, 1, 16); err != nil {
					return err
				}
			}
		}
	case "aligned":
		for _, op := range tiledOps {
			d, err := s.timer.Dims("large", op)
			if err != nil {
				return err
			}
			for _, dt := range []scans.DType{scans.F16, scans.BF16} {
				rt, rc, _ := s.ruleTiled(op, d, dt)
				for _, aligned := range []bool{true, false} {
					s.b.cfg.noAlignWords = !aligned
					if err := s.row("large", op, d, dt, false, rt, rc, true); err != nil {
						return err
					}
				}
				s.b.cfg.noAlignWords = false
			}
		}
	case "givens":
		return s.givens()
	case "givens16":
		return s.givens16()
	case "rows":
		return s.rows()
	case "affine-long":
		return s.affineLong([]scans.DType{scans.F32}, true)
	case "affine-long16":
		return s.affineLong(scans.DTypes, false)
	}
	return nil
}

// givens: the fallback kernels, then the subgroup kernels at ring depths
// 4 and givensSGDepth under every chunk count from 1 while chunks keep 8
// steps and fit a workgroup and the device's own shared memory limit
// (not the 32 KiB the layouts' rules take).
func (s *sweep) givens() error {
	defer func() { s.b.cfg.noSubgroup, s.b.cfg.givensChunks, s.b.cfg.givensDepth = false, 0, 0 }()
	op := scans.OpGivensScan
	for _, sh := range []struct {
		name  string
		modes []bool
	}{{"lab", []bool{false, true}}, {"long-T", []bool{false, true}}, {"large", []bool{false}}} {
		d, err := s.timer.Dims(sh.name, op)
		if err != nil {
			return err
		}
		for _, bwd := range sh.modes {
			s.b.cfg.noSubgroup, s.b.cfg.givensChunks, s.b.cfg.givensDepth = true, 0, 0
			s.kernel = "fallback"
			if err := s.row(sh.name, op, d, scans.F32, bwd, 0, 0, false); err != nil {
				return err
			}
			s.b.cfg.noSubgroup = false
			rw, rc, rd, ok := givensSGLayout(d.B, d.T, d.N, d.K, s.d.shuffleWidth(),
				s.d.subgroupAlign(), s.d.maxWorkgroup(), s.d.maxSharedMemory())
			if !ok {
				continue
			}
			fits := func(chunks int) bool {
				wg := givensSGChunksWG(rw, d.K, chunks, s.d.subgroupAlign()) // as the backend sets it for the chunks knob
				return 8*chunks <= d.T && wg <= s.d.maxWorkgroup() && givensSGShared(d.K, wg, chunks) <= s.d.sharedMemoryLimit()
			}
			for _, depth := range []int{4, givensSGDepth} {
				s.kernel = fmt.Sprintf("sg-d%d", depth)
				for chunks := 1; fits(chunks); chunks *= 2 {
					s.b.cfg.givensChunks, s.b.cfg.givensDepth = chunks, depth
					if err := s.row(sh.name, op, d, scans.F32, bwd, 0, chunks, chunks == rc && depth == rd); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// givens16: the subgroup kernels, unchunked as the rule runs them at the
// large shape, under ring depths 2 to 16, the 16-bit kernels compiled for
// whole words (and then also with rings of 24 and 32) and not.
func (s *sweep) givens16() error {
	defer func() { s.b.cfg.givensDepth, s.b.cfg.noAlignWords = 0, false }()
	op := scans.OpGivensScan
	d, err := s.timer.Dims("large", op)
	if err != nil {
		return err
	}
	_, _, rd, ok := givensSGLayout(d.B, d.T, d.N, d.K, s.d.shuffleWidth(),
		s.d.subgroupAlign(), s.d.maxWorkgroup(), s.d.maxSharedMemory())
	if !ok {
		return errors.New("vulkan: sweep: givens16: the device has no subgroup Givens kernels")
	}
	for _, dt := range scans.DTypes {
		for _, aligned := range []bool{true, false} {
			if !aligned && dt.Size() == 4 {
				continue
			}
			s.b.cfg.noAlignWords = !aligned
			depths := []int{2, 4, 8, 16}
			if dt.Size() == 2 && aligned {
				depths = append(depths, 24, 32)
			}
			for _, depth := range depths {
				s.kernel = fmt.Sprintf("sg-d%d", depth)
				s.b.cfg.givensDepth = depth
				if err := s.row("large", op, d, dt, false, 0, 1, depth == givensSGForwardRing(rd, dt) && aligned); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// rows: the forward at the lab and large shapes under workgroups of 32 to
// 128 invocations and rings of 4 and 8, then at the large shape the
// forward+backward with the forward at the rule's layout and the backward
// under workgroups of 32 to 128 and rings of 2 to 8.
func (s *sweep) rows() error {
	defer func() { s.b.cfg.rowsWG, s.b.cfg.rowsRing = [2]int{}, [2]int{} }()
	op := scans.OpMatrixAffineScan
	s.kernel = "rows"
	maxWG, maxShared := s.d.maxWorkgroup(), s.d.maxSharedMemory()
	for _, shape := range []string{"lab", "large"} {
		d, err := s.timer.Dims(shape, op)
		if err != nil {
			return err
		}
		for _, wg := range []int{32, 64, 128} {
			for _, ring := range []int{4, 8} {
				s.b.cfg.rowsWG[0], s.b.cfg.rowsRing[0] = wg, ring
				rule := wg == rowWorkgroup(d.V, 4, false, maxWG, maxShared) && ring == rowRing(d.K, d.V, 4, false)
				if err := s.row(shape, op, d, scans.F32, false, wg, ring, rule); err != nil {
					return err
				}
			}
		}
	}
	s.b.cfg.rowsWG[0], s.b.cfg.rowsRing[0] = 0, 0
	d, err := s.timer.Dims("large", op)
	if err != nil {
		return err
	}
	for _, wg := range []int{32, 64, 128} {
		for _, ring := range []int{2, 4, 8} {
			s.b.cfg.rowsWG[1], s.b.cfg.rowsRing[1] = wg, ring
			rule := wg == rowWorkgroup(d.V, 4, true, maxWG, maxShared) && ring == rowRing(d.K, d.V, 4, true)
			if err := s.row("large", op, d, scans.F32, true, wg, ring, rule); err != nil {
				return err
			}
		}
	}
	return nil
}

// affineLong is the affine-long part (withRows) and the affine-long16
// part (not withRows).
func (s *sweep) affineLong(dts []scans.DType, withRows bool) error {
	cfg := &s.b.cfg
	defer func() {
		cfg.rowsWG, cfg.affineRows, cfg.blockChunks, cfg.blockCols, cfg.colRing = [2]int{}, 0, 0, 0, 0
	}()
	op := scans.OpMatrixAffineScan
	d, err := s.timer.Dims("long-T", op)
	if err != nil {
		return err
	}
	maxWG, maxShared := s.d.maxWorkgroup(), s.d.maxSharedMemory()
	for _, dt := range dts {
		ruleCols := blockCols(dt, d.V)
		ruleRows := blockRows(d.B, d.T, d.N, d.K, d.V, ruleCols, maxWG, maxShared)
		for _, bwd := range []bool{false, true} {
			if withRows {
				s.kernel = "rows"
				cfg.affineRows = 1
				for _, wg := range []int{32, 64} {
					// forward+backward: the forward at the rule's workgroup
					cfg.rowsWG = [2]int{}
					if bwd {
						cfg.rowsWG[1] = wg
					} else {
						cfg.rowsWG[0] = wg
					}
					rule := ruleRows && wg == rowWorkgroup(d.V, dt.Size(), bwd, maxWG, maxShared)
					if err := s.row("long-T", op, d, dt, bwd, wg, 1, rule); err != nil {
						return err
					}
				}
				cfg.rowsWG = [2]int{}
			}
			cfg.affineRows = -1
			for _, cols := range []int{1, 2} {
				kernel := "columns"
				if cols == 2 {
					kernel = "columns2"
				}
				s.kernel = kernel
				cfg.blockCols = cols
				_, ruleChunks := blockLayout(d.B, d.T, d.N, d.K, d.V, cols, maxWG, maxShared)
				first := 1
				if !withRows {
					first = 8
				}
				ruleRing := colRing(d.K, dt.Size())
				for chunks := first; 8*chunks <= d.T; chunks *= 2 {
					wg, shared := blockChunkLayout(d.K, d.V, cols, chunks)
					if wg > maxWG || shared > maxShared {
						break
					}
					cfg.blockChunks = chunks
					if err := s.row("long-T", op, d, dt, bwd, wg, chunks, !ruleRows && cols == ruleCols && chunks == ruleChunks); err != nil {
						return err
					}
					if withRows || chunks != ruleChunks {
						continue
					}
					// affine-long16: the rule's chunks under rings of 0 to 8
					// steps.
					for _, ring := range []int{0, 1, 2, 4, 8} {
						if ring == ruleRing {
							continue
						}
						s.kernel = fmt.Sprintf("%s-r%d", kernel, ring)
						cfg.colRing = ring + 1
						if err := s.row("long-T", op, d, dt, bwd, wg, chunks, false); err != nil {
							return err
						}
					}
					s.kernel, cfg.colRing = kernel, 0
				}
			}
			cfg.affineRows, cfg.blockChunks, cfg.blockCols, cfg.colRing = 0, 0, 0, 0
		}
	}
	return nil
}
