package bench

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/eager"
)

// BenchmarkLab times every operation at the lab shape on eager, forward
// and forward plus backward, in f32 (go test -bench Lab ./bench). The
// reported MB/s is the traffic of Traffic.
func BenchmarkLab(b *testing.B) {
	benchShape(b, eager.New(), Shapes[0])
}

func benchShape(b *testing.B, be scans.Backend, s Shape) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, op := range scans.Ops {
		for _, mode := range []Mode{ModeForward, ModeBackward} {
			b.Run(string(op)+"/"+string(mode), func(b *testing.B) {
				d, _ := NormalizeDims(op, s.Dims(op))
				in, err := InputsInit(op, d, scans.F32, Typical, true, rng)
				if err != nil {
					b.Fatal(err)
				}
				bytes, err := Traffic(op, d, scans.F32, mode)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(bytes)
				args := in.Tensors()
				for b.Loop() {
					out, err := Forward(be, op, args)
					if err != nil {
						b.Fatal(err)
					}
					if mode == ModeBackward {
						if _, err := Backward(be, op, args, out, in.Grad); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}

func TestQuantile(t *testing.T) {
	same := []float64{1e-5, 1e-5, 1e-5, 1e-5, 1e-5, 1e-5, 1e-5}
	for _, q := range []float64{0.1, 0.5, 0.9} {
		if got := quantile(same, q); got != 1e-5 {
			t.Errorf("quantile of equal values at %g = %g", q, got)
		}
	}
	xs := []float64{1, 2, 3, 4, 10}
	if p10, p50, p90 := quantile(xs, 0.1), quantile(xs, 0.5), quantile(xs, 0.9); p10 != 1 || p50 != 3 || p90 != 10 {
		t.Errorf("quantiles %g %g %g, want the measured 1 3 10", p10, p50, p90)
	}
}

// TestGivensPathsSameProblem checks that the two paths GivensPaths times
// compute the same thing: the generic inputs run through
// matrix_affine_scan give the fused path's output.
func TestGivensPathsSameProblem(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	d := scans.Dims{B: 3, T: 17, N: 2, K: 4, V: 1}
	in, err := InputsInit(scans.OpGivensScan, d, scans.F32, Typical, true, rng)
	if err != nil {
		t.Fatal(err)
	}
	A, err := givensMatrixHost(in)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := genericInputs(in, A)
	if err != nil {
		t.Fatal(err)
	}
	e := eager.New()
	hf, err := Forward(e, scans.OpGivensScan, in.Tensors())
	if err != nil {
		t.Fatal(err)
	}
	hg, err := Forward(e, scans.OpMatrixAffineScan, gen.Tensors())
	if err != nil {
		t.Fatal(err)
	}
	f, g := hf.(*scans.Host).Float32s(), hg.(*scans.Host).Float32s()
	if len(f) != len(g) {
		t.Fatalf("%d outputs against %d", len(f), len(g))
	}
	for i := range f {
		if !(math.Abs(float64(f[i]-g[i])) <= 1e-5) {
			t.Fatalf("element %d: fused %g, generic %g", i, f[i], g[i])
		}
	}
	fused, generic, err := GivensPaths(e, d, scans.F32, Timing{MinRuns: 2, MaxRuns: 2}, rng)
	if err != nil {
		t.Fatal(err)
	}
	if fused.Op != scans.OpGivensScan || generic.Op != scans.OpMatrixAffineScan || !(fused.Median > 0) || !(generic.Median > 0) {
		t.Errorf("fused %+v, generic %+v", fused, generic)
	}
}

// TestTraffic checks the byte counts against the tensors' sizes: the
// benchmark's initial states, mingru_scan's 9 passes over (B,T,D) and
// the unfused chain's 19 (plus the value rows of log h0).
func TestTraffic(t *testing.T) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 4))
	for range 20 {
		d := scans.Dims{B: 1 + rng.IntN(9), T: 1 + rng.IntN(300), N: 1 + rng.IntN(70)}
		dt := []scans.DType{scans.F32, scans.F16, scans.BF16}[rng.IntN(3)]
		size := int64(dt.Size())
		btd, bd := int64(d.B*d.T*d.N)*size, int64(d.B*d.N)*size
		traffic := func(op scans.Op, mode Mode) int64 {
			n, err := Traffic(op, d, dt, mode)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if got, want := traffic(scans.OpLinearScan, ModeForward), 3*btd+bd; got != want {
			t.Errorf("%v %v: linear_scan forward %d bytes, want a, b, h0, h: %d", d, dt, got, want)
		}
		if got, want := traffic(scans.OpMingruScan, ModeForward), 3*btd; got != want {
			t.Errorf("%v %v: mingru_scan forward %d bytes, want k, x, h (no h0): %d", d, dt, got, want)
		}
		fused := traffic(scans.OpMingruScan, ModeBackward)
		if want := 9 * btd; fused != want {
			t.Errorf("%v %v: mingru_scan forward+backward %d bytes, want 9 passes: %d", d, dt, fused, want)
		}
		gates, err := GateTraffic(d, dt)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := traffic(scans.OpParallelScanLog, ModeBackward)+gates, 19*btd+5*bd; got != want {
			t.Errorf("%v %v: the unfused chain moves %d bytes, want 19 passes and 5 rows: %d", d, dt, got, want)
		}
	}
}
