//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/mingru/scans"
)

// Sweep is a layout experiment: it times kernels under layouts other than
// the ones the backend's rules choose, so that the rules can be checked
// on a new device. It runs the parts of SweepParts named in parts (all
// when parts is empty) with timer and writes w, for each part, a comment
// line naming the part and the device, the part's header and one
// tab-separated row per timing, as it goes: the row of the rule's own
// layout says so in its rule column. A timing that fails is written as a
// comment line and the sweep goes on; the errors are returned together
// at the end.
//
// It sets b's layouts while it runs and puts them back when it returns:
// make no other call on b meanwhile.
func (b *Backend) Sweep(w io.Writer, parts []string, timer scans.LayoutTimer) (err error) {
	defer guard("sweep", &err)
	for _, p := range parts {
		if !slices.Contains(SweepParts, p) {
			return fmt.Errorf("cuda: sweep: no part %q (want one of %v)", p, SweepParts)
		}
	}
	if len(parts) == 0 {
		parts = SweepParts
	}
	if err := b.ensure(); err != nil {
		return err
	}
	poison := b.poison
	b.poison = false // the timings are the kernels'
	defer func() { b.occ.layout, b.poison = nil, poison }()
	s := &sweep{b: b, w: w, timer: timer}
	for _, p := range parts {
		if err := s.part(p); err != nil {
			return errors.Join(append(s.errs, err)...)
		}
	}
	return errors.Join(s.errs...)
}

// sweep is one Sweep in progress.
type sweep struct {
	b     *Backend
	w     io.Writer
	timer scans.LayoutTimer
	errs  []error
}

// start writes a part's first lines.
func (s *sweep) start(part, header string) error {
	_, err := fmt.Fprintf(s.w, "# %s on %s\n%s\n", part, s.b.Status().Device, header)
	return err
}

// row times op under rules and writes the row: cols (the columns before
// the median), then the median in µs. An error writing w ends the sweep,
// a failed timing does not.
func (s *sweep) row(rules *layoutRules, op scans.Op, d scans.Dims, dt scans.DType, bwd bool, cols string) error {
	s.b.occ.layout = rules
	med, err := s.timer.Time(s.b, op, d, dt, bwd)
	s.b.occ.layout = nil
	if err != nil {
		err = fmt.Errorf("%s %v %s %q: %w", op, d, dt, cols, err)
		s.errs = append(s.errs, err)
		_, werr := fmt.Fprintf(s.w, "# %v\n", err)
		return werr
	}
	_, err = fmt.Fprintf(s.w, "%s\t%.2f\n", cols, float64(med.Nanoseconds())/1e3)
	return err
}

func modeName(bwd bool) string {
	if bwd {
		return "forward+backward"
	}
	return "forward"
}

// part runs one part of the sweep.
func (s *sweep) part(name string) error {
	switch name {
	case "givens-chunks":
		if err := s.start(name, "B\tT\tN\tk\tlanes_x_k\tmode\tchunks\trule\tmedian_us"); err != nil {
			return err
		}
		for _, d := range []scans.Dims{
			{B: 128, T: 64, N: 8, K: 8, V: 1},  // lab
			{B: 16, T: 1024, N: 8, K: 8, V: 1}, // long-T
			{B: 128, T: 256, N: 8, K: 8, V: 1},
			{B: 64, T: 256, N: 8, K: 8, V: 1},
			{B: 64, T: 1024, N: 8, K: 8, V: 1},
			{B: 32, T: 128, N: 8, K: 8, V: 1},
			{B: 4, T: 4096, N: 8, K: 8, V: 1},
		} {
			cols := fmt.Sprintf("%d\t%d\t%d\t%d\t%d", d.B, d.T, d.N, d.K, d.B*d.N*d.K)
			if err := s.givensChunks(d, scans.F32, cols, []bool{false, true}, maxChunks); err != nil {
				return err
			}
		}
	case "givens-chunks-large":
		if err := s.start(name, "B\tT\tN\tk\tdtype\tmode\tchunks\trule\tmedian_us"); err != nil {
			return err
		}
		d, err := s.timer.Dims("large", scans.OpGivensScan)
		if err != nil {
			return err
		}
		for _, dt := range scans.DTypes {
			cols := fmt.Sprintf("%d\t%d\t%d\t%d\t%s", d.B, d.T, d.N, d.K, dt)
			if err := s.givensChunks(d, dt, cols, []bool{false}, 8); err != nil {
				return err
			}
		}
	case "matrix-scan":
		return s.matrixScan()
	case "elementwise-chunks":
		return s.elementwiseChunks()
	case "givens-tile":
		return s.givensTile()
	}
	return nil
}

// givensChunks times givens_scan at d in dt, forward (and
// forward+backward where modes has true), under 1, 2, 4, ... chunks up to
// maxC and as many as the chunked kernels take.
func (s *sweep) givensChunks(d scans.Dims, dt scans.DType, cols string, modes []bool, maxC int) error {
	rule := givensChunks(d.B, d.T, d.N, d.K, s.b.occ)
	for _, bwd := range modes {
		for c := 1; c <= maxC && d.K*c <= givensChunkedMaxThreads && c <= d.T; c *= 2 {
			cc := c
			rules := &layoutRules{givensChunks: func(int, int, int, int, occupancy) int { return cc }}
			if err := s.row(rules, scans.OpGivensScan, d, dt, bwd, fmt.Sprintf("%s\t%s\t%d\t%v", cols, modeName(bwd), c, c == rule)); err != nil {
				return err
			}
		}
	}
	return nil
}

// matrixScan is the matrix-scan part.
func (s *sweep) matrixScan() error {
	if err := s.start("matrix-scan", "B\tT\tN\tdtype\tmode\ttile\tchunks\trule\tmedian_us"); err != nil {
		return err
	}
	op := scans.OpMatrixScan
	for _, shape := range []string{"long-T", "lab", "large"} {
		d, err := s.timer.Dims(shape, op)
		if err != nil {
			return err
		}
		large := shape == "large"
		dts := []scans.DType{scans.F32, scans.F16}
		if large {
			dts = scans.DTypes
		}
		for _, dt := range dts {
			for _, bwd := range []bool{false, true} {
				if large && bwd {
					continue
				}
				rw, rc := matrixScanLayout(d.B, d.T, d.N, dt, bwd, s.b.occ)
				for w := 1; w <= 32; w *= 2 {
					if large && w < 8 {
						continue
					}
					for c := 1; c <= maxChunks && c*minChunk/2 <= d.T; c *= 2 {
						limit := 1024
						if bwd {
							limit = msMaxThreadsBwd(dt)
						}
						if w*c > limit || matrixScanShared(w, c) > maxShared {
							continue
						}
						ww, cc := w, c
						rules := &layoutRules{matrixScanLayout: func(int, int, int, scans.DType, bool, occupancy) (int, int) { return ww, cc }}
						cols := fmt.Sprintf("%d\t%d\t%d\t%s\t%s\t%d\t%d\t%v", d.B, d.T, d.N, dt, modeName(bwd), w, c, w == rw && c == rc)
						if err := s.row(rules, op, d, dt, bwd, cols); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	return nil
}

// elementwiseChunks is the elementwise-chunks part.
func (s *sweep) elementwiseChunks() error {
	if err := s.start("elementwise-chunks", "op\tdtype\tmode\tchunks\trule\tround\tmedian_us"); err != nil {
		return err
	}
	for _, op := range []scans.Op{scans.OpLinearScan, scans.OpParallelScanLog} {
		d, err := s.timer.Dims("large", op)
		if err != nil {
			return err
		}
		for _, dt := range scans.DTypes {
			p := planFor(op, scans.Forward, d, dt, true, s.b.occ)
			for round := 0; round < 3; round++ {
				limit := 1024
				if op == scans.OpParallelScanLog && dt != scans.F32 {
					ch := 1
					if p.pairs {
						ch = 2
					}
					limit = logFwd16MaxThreads(ch)
				}
				for c := 1; c <= maxChunks && c*tile <= limit && c*tile*2 <= 1024; c *= 2 {
					cc := c
					rules := &layoutRules{elementwiseChunks: func(scans.Op, bool, int, int, int, int, occupancy) int { return cc }}
					cols := fmt.Sprintf("%s\t%s\tforward\t%d\t%v\t%d", op, dt, c, c == p.by, round)
					if err := s.row(rules, op, d, dt, false, cols); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// givensTile is the givens-tile part.
func (s *sweep) givensTile() error {
	if err := s.start("givens-tile", "dtype\tmode\ttile\trule\tround\tmedian_us"); err != nil {
		return err
	}
	op := scans.OpGivensScan
	d, err := s.timer.Dims("large", op)
	if err != nil {
		return err
	}
	rule := givensTile(d.B, d.N, d.K, s.b.occ)
	for _, dt := range scans.DTypes {
		for round := 0; round < 2; round++ {
			for _, bwd := range []bool{false, true} {
				for _, w := range []int{4, 8, 16} {
					ww := w
					rules := &layoutRules{givensTile: func(int, int, int, occupancy) int { return ww }}
					cols := fmt.Sprintf("%s\t%s\t%d\t%v\t%d", dt, modeName(bwd), w, w == rule, round)
					if err := s.row(rules, op, d, dt, bwd, cols); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}
