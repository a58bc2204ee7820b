package conformancetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/conformance"
)

// logRange is a way of drawing parallel_scan_log's inputs far outside the
// benchmark's distribution: lc and lv for step t of T (lv has T+1 steps;
// lc is asked for t < T only).
type logRange struct {
	name     string
	lc, lv   func(rng *rand.Rand, t int) float64
	overflow bool // some outputs overflow to +Inf
}

// logRanges are the regimes TestLogRange draws from. A GPU kernel may
// take a chunk of steps in a closed form where its exponents stay
// moderate and the state entering the chunk is not far below the chunk's
// largest term, and the recurrence elsewhere; these regimes put chunks on
// both sides of those bounds, and outputs past the float range.
var logRanges = []logRange{
	{
		// Decays of up to e^-60 a step: sums of log_coeffs far past any
		// moderate bound within a few steps.
		name: "strong-decay",
		lc:   func(rng *rand.Rand, _ int) float64 { return -60 * rng.Float64() },
		lv:   func(rng *rand.Rand, _ int) float64 { return 4 * rng.NormFloat64() },
	},
	{
		// A state far below what comes in after it, then a value near the
		// top of the float range: in each period of 64 steps, 16 of
		// e^-150 (h_{-1} too), 12 of order 1, one of e^88, 35 of order 1.
		// A closed form scaled to the e^88 would lose the steps of order
		// 1 before it where a device flushes tiny floats to zero.
		name: "far-below",
		lc:   func(rng *rand.Rand, _ int) float64 { return -0.5 * rng.Float64() },
		lv: func(rng *rand.Rand, t int) float64 {
			switch p := t % 64; {
			case p < 16:
				return -150
			case p == 28:
				return 88
			}
			return 0.5 * rng.NormFloat64()
		},
	},
	{
		// Growth of e^2 to e^5 a step: every output past some step is +Inf.
		name:     "overflow",
		lc:       func(rng *rand.Rand, _ int) float64 { return 2 + 3*rng.Float64() },
		lv:       func(rng *rand.Rand, _ int) float64 { return 2 * rng.NormFloat64() },
		overflow: true,
	},
	{
		// Wide and mixed: log_coeffs in (-8, 4), log_values in (-100, 100).
		name: "wide",
		lc:   func(rng *rand.Rand, _ int) float64 { return 12*rng.Float64() - 8 },
		lv:   func(rng *rand.Rand, _ int) float64 { return 200*rng.Float64() - 100 },
	},
}

// draw returns parallel_scan_log's inputs at d in dt, drawn from lr.
func (lr logRange) draw(t *testing.T, d scans.Dims, dt scans.DType, rng *rand.Rand) *bench.InputSet {
	t.Helper()
	in, err := bench.InputsInit(scans.OpParallelScanLog, d, dt, bench.Typical, true, rng)
	if err != nil {
		t.Fatal(err)
	}
	lc, lv := in.Args[0], in.Args[1]
	for i := range lc.Len() {
		lc.Set(i, float32(lr.lc(rng, i/d.N%d.T)))
	}
	for i := range lv.Len() {
		lv.Set(i, float32(lr.lv(rng, i/d.N%(d.T+1))))
	}
	return in
}

// TestLogRange runs parallel_scan_log's forward on b with inputs drawn
// from logRanges (fresh draws, T = 40 and 300 to reach the chunked paths,
// every element type with an even D for the 16-bit kernels that take two
// channels at once) and checks every output against eager as
// TestSpecialValues does: +Inf and NaN where eager has them, within the
// gate elsewhere. The backward is not held to its gate here: with
// log_coeffs above 0 its sums of growing, cancelling terms are
// ill-conditioned, and two correct f32 computations differ beyond it.
func TestLogRange(t *testing.T, b scans.Backend) {
	t.Helper()
	ref, seed := checkStart(t, b)
	op := scans.OpParallelScanLog
	for ri, lr := range logRanges {
		for _, T := range []int{40, 300} {
			for _, dt := range scans.DTypes {
				d := scans.Dims{B: 3, T: T, N: 4, K: 1, V: 1}
				rng := rand.New(rand.NewPCG(seed, uint64(ri*10000+T*10+int(dt))))
				in := lr.draw(t, d, dt, rng)
				lc, lv := in.Args[0], in.Args[1]
				label := fmt.Sprintf("%s %v T=%d %s", op, dt, T, lr.name)
				want, got := againstRef(t, ref, b, op, scans.Forward, in, label)
				atol, rtol := conformance.Gate(op, scans.Forward, dt)
				exact := [][]float64{logScan64(lc, lv, d)}
				nonFinite := matchIEEE(t, label, want, got, exact, atol, rtol)
				if lr.overflow && nonFinite == 0 {
					t.Errorf("%s: no output overflowed; the regime was not exercised", label)
				}
			}
		}
	}
}

// logScan64 is parallel_scan_log's forward on lc and lv in float64, with
// no rounding at the end: log h_t = logaddexp(lc_t + log h_{t-1},
// lv_{t+1}), log h_{-1} = lv_0.
func logScan64(lc, lv *scans.Host, d scans.Dims) []float64 {
	out := make([]float64, d.B*d.T*d.N)
	for b := range d.B {
		for n := range d.N {
			y := float64(lv.At(b*(d.T+1)*d.N + n))
			for t := range d.T {
				x, v := float64(lc.At((b*d.T+t)*d.N+n))+y, float64(lv.At((b*(d.T+1)+t+1)*d.N+n))
				y = math.Max(x, v)
				if lo := math.Min(x, v); !math.IsInf(y, 0) {
					y += math.Log1p(math.Exp(lo - y))
				}
				out[(b*d.T+t)*d.N+n] = math.Exp(y)
			}
		}
	}
	return out
}
