package eager

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mingru/scans"
)

// newRand returns a generator seeded from the clock, and logs the seed so
// that a failure can be replayed.
func newRand(t testing.TB) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

func uniform(r *rand.Rand, n int, lo, hi float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(lo + (hi-lo)*r.Float64())
	}
	return out
}

func normal(r *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64())
	}
	return out
}

// negSoftplus draws -softplus(z), z standard normal (the benchmark's
// log_coeffs and log_values).
func negSoftplus(r *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(-softplus(r.NormFloat64()))
	}
	return out
}

// rotMatrix builds the kxk Givens rotation R(theta) as a matrix, the
// product of the plane rotations, second layer times first layer.
func rotMatrix(k int, th []float64) []float64 {
	R := identity(k)
	mul := func(i, j int, angle float64) { // R = G R, G the plane rotation (i,j)
		c, s := math.Cos(angle), math.Sin(angle)
		for col := 0; col < k; col++ {
			ri, rj := R[i*k+col], R[j*k+col]
			R[i*k+col] = c*ri - s*rj
			R[j*k+col] = s*ri + c*rj
		}
	}
	first := k / 2
	for p := 0; p < first; p++ {
		mul(2*p, 2*p+1, th[p])
	}
	for q := 0; q < (k-1)/2; q++ {
		mul(2*q+1, 2*q+2, th[first+q])
	}
	return R
}

func identity(k int) []float64 {
	m := make([]float64, k*k)
	for i := 0; i < k; i++ {
		m[i*k+i] = 1
	}
	return m
}

// rotationBlocks draws blocks scale*R(theta) (B,T,N,k,k) with uniform
// random angles; for k = 1 every block is scale.
func rotationBlocks(r *rand.Rand, lanes, k int, scale func() float64) []float32 {
	out := make([]float32, 0, lanes*k*k)
	for l := 0; l < lanes; l++ {
		s := scale()
		if k == 1 {
			out = append(out, float32(s))
			continue
		}
		th := make([]float64, k-1)
		for i := range th {
			th[i] = (2*r.Float64() - 1) * math.Pi
		}
		for _, v := range rotMatrix(k, th) {
			out = append(out, float32(s*v))
		}
	}
	return out
}

func f64(x []float32) []float64 {
	if x == nil {
		return nil
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

func nanSlice[F Float](n int) []F {
	out := make([]F, n)
	for i := range out {
		out[i] = F(math.NaN())
	}
	return out
}

func host(t testing.TB, vals []float32, shape ...int) *scans.Host {
	t.Helper()
	h, err := scans.FromFloat32(vals, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// data returns a host tensor's elements widened to float64; nil for nil.
func data(t testing.TB, x scans.Tensor) []float64 {
	t.Helper()
	if scans.IsNil(x) {
		return nil
	}
	h, ok := x.(*scans.Host)
	if !ok {
		t.Fatalf("output is %T, want *scans.Host", x)
	}
	return h.Float64s()
}

// mismatch describes the first elements of got that are not within
// atol + rtol*|want| of want (NaN never passes, equal infinities do), and
// returns "" when all are. It also reports the largest error.
func mismatch[G Float](got []G, want []float64, atol, rtol float64) string {
	if len(got) != len(want) {
		return fmt.Sprintf("length %d, want %d", len(got), len(want))
	}
	bad, msg, worst, at := 0, "", 0.0, -1
	for i, w := range want {
		g := float64(got[i])
		if g == w && !math.IsNaN(w) {
			continue
		}
		e := math.Abs(g - w)
		if !(e <= atol+rtol*math.Abs(w)) {
			if bad < 4 {
				msg += fmt.Sprintf(" [%d] got %.9g want %.9g (err %.3g);", i, g, w, e)
			}
			bad++
		}
		if !(e <= worst) {
			worst, at = e, i
		}
	}
	if bad == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d elements outside atol=%.3g rtol=%.3g, worst err %.3g at %d:%s", bad, len(want), atol, rtol, worst, at, msg)
}

// check fails t when got is not within the gate of want.
func check[G Float](t testing.TB, what string, got []G, want []float64, atol, rtol float64) {
	t.Helper()
	if m := mismatch(got, want, atol, rtol); m != "" {
		t.Errorf("%s: %s", what, m)
	}
}

// maxAbs is the largest |x|; NaN makes it NaN.
func maxAbs(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		if math.IsNaN(v) {
			return math.NaN()
		}
		m = math.Max(m, math.Abs(v))
	}
	return m
}

// allWritten fails t when x still holds a NaN poison value.
func allWritten[F Float](t testing.TB, what string, x []F) {
	t.Helper()
	for i, v := range x {
		if v != v {
			t.Errorf("%s: element %d of %d not written (still NaN)", what, i, len(x))
			return
		}
	}
}

// The conformance gates of SPEC.
const (
	affineAtol, affineGradAtol = 1e-5, 1e-3
	logAtol, logRtol           = 1e-4, 1e-4
	logGradAtol, logGradRtol   = 1e-3, 1e-3
	givensAtol                 = 1e-5
	givensGradAtol             = 1e-3
	givensGradRtol             = 1e-3
)

// Ts are the sequence lengths every forward test covers.
var Ts = []int{1, 2, 3, 63, 64, 65, 1000}
