package eager

import (
	"math"
	"testing"

	"github.com/mingru/scans"
)

// logCase runs parallel_scan_log forward and backward through the Backend
// on lc and lv (B,T,D) and (B,T+1,D), checks that every output and
// gradient is finite, the output against the float64 closed form of SPEC
// and the gradients against the float64 kernels, within SPEC's gates. For
// outputs in float32's normal range it also checks the relative error
// alone (rtol = 1e-4), which the absolute term of the gate would hide for
// small values.
func logCase(t *testing.T, name string, B, T, D int, lc, lv, dh []float32) {
	t.Helper()
	be := New()
	d := scans.Dims{B: B, T: T, N: D, K: 1, V: 1}
	lcT, lvT := host(t, lc, B, T, D), host(t, lv, B, T+1, D)
	h, err := be.ParallelScanLog(lcT, lvT)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got := h.(*scans.Host).Float32Data()
	want := refLog(B, T, D, f64(lc), f64(lv))
	finite(t, name+": h", got)
	check(t, name+": h", got, want, logAtol, logRtol)
	for i, w := range want {
		if w > 0x1p-126 && w < math.MaxFloat32 && !(math.Abs(float64(got[i])-w) <= 1e-4*w) {
			t.Errorf("%s: h[%d] = %g, want %g: relative error %.3g", name, i, got[i], w, math.Abs(float64(got[i])-w)/w)
			break
		}
	}

	dlc, dlv, err := be.ParallelScanLogBackward(lcT, lvT, h, host(t, dh, B, T, D))
	if err != nil {
		t.Fatalf("%s: backward: %v", name, err)
	}
	lc64, lv64 := f64(lc), f64(lv)
	h64 := make([]float64, B*T*D)
	LogForward(d, lc64, lv64, h64)
	wlc, wlv := make([]float64, len(lc)), make([]float64, len(lv))
	LogBackward(d, lc64, lv64, h64, f64(dh), wlc, wlv)
	g1, g2 := dlc.(*scans.Host).Float32Data(), dlv.(*scans.Host).Float32Data()
	finite(t, name+": dlog_coeffs", g1)
	finite(t, name+": dlog_values", g2)
	check(t, name+": dlog_coeffs", g1, wlc, logGradAtol, logGradRtol)
	check(t, name+": dlog_values", g2, wlv, logGradAtol, logGradRtol)
}

func finite[F Float](t testing.TB, what string, x []F) {
	t.Helper()
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Errorf("%s: element %d of %d is %v", what, i, len(x), v)
			return
		}
	}
}

// TestLogScanStrongDecay: log_coeffs near -50 over T = 4096 steps, where
// exp of the cumulative sum of log_coeffs underflows float32 after two
// steps.
func TestLogScanStrongDecay(t *testing.T) {
	r := newRand(t)
	B, T, D := 2, 4096, 5
	lc := uniform(r, B*T*D, -50.5, -49.5)
	logCase(t, "log_coeffs near -50", B, T, D, lc, negSoftplus(r, B*(T+1)*D), normal(r, B*T*D))
}

// TestLogScanLargeLogs: log values from -200 to 85 and log coefficients
// from -60 to -0.5, where every linear form overflows or underflows
// float32: exp(log_values) of -200 is 0 in float32, exp of the cumulative
// sum a* of log_coeffs falls below 1e-6000, and exp(log_values_s - a*_s)
// rises above 1e6000; the outputs lie between 0 and exp(86).
func TestLogScanLargeLogs(t *testing.T) {
	r := newRand(t)
	B, T, D := 3, 2048, 5
	if testing.Short() {
		T = 512
	}
	lc := uniform(r, B*T*D, -60, -0.5)
	lv := uniform(r, B*(T+1)*D, -200, 85)
	// The test is only meaningful where the linear forms fail.
	astar, worst := 0.0, 0.0
	for t := 0; t < T; t++ {
		astar += float64(lc[t*D])
		worst = math.Max(worst, float64(lv[(t+1)*D])-astar)
	}
	if !(astar < -104 && worst > 89) {
		t.Fatalf("inputs do not leave float32's range: a* = %g, max(lv - a*) = %g", astar, worst)
	}
	logCase(t, "log values -200..85", B, T, D, lc, lv, normal(r, B*T*D))
}

// TestLogAddExp checks the log-space step on special values: -Inf is the
// identity, +Inf absorbs, NaN propagates, and large equal arguments add
// log 2 without overflow.
func TestLogAddExp(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct{ x, y, want float64 }{
		{math.Inf(-1), math.Inf(-1), math.Inf(-1)},
		{math.Inf(-1), 3, 3},
		{3, math.Inf(-1), 3},
		{inf, 3, inf},
		{inf, inf, inf},
		{1000, 1000, 1000 + math.Ln2},
		{-1000, -1000, -1000 + math.Ln2},
		{0, 0, math.Ln2},
		{2, -40, 2 + math.Log1p(math.Exp(-42))},
	}
	for _, c := range cases {
		if got := logAddExp(c.x, c.y); got != c.want && math.Abs(got-c.want) > 1e-15*math.Abs(c.want) {
			t.Errorf("logAddExp(%v, %v) = %v, want %v", c.x, c.y, got, c.want)
		}
		if got := logAddExp(float32(c.x), float32(c.y)); float64(got) != float64(float32(c.want)) && math.Abs(float64(got)-c.want) > 1e-6*math.Abs(c.want) {
			t.Errorf("logAddExp(float32 %v, %v) = %v, want %v", c.x, c.y, got, c.want)
		}
	}
	for _, xy := range [][2]float64{{math.NaN(), 1}, {1, math.NaN()}, {math.NaN(), math.Inf(-1)}, {math.Inf(-1), math.NaN()}, {inf, math.NaN()}} {
		if got := logAddExp(xy[0], xy[1]); !math.IsNaN(got) {
			t.Errorf("logAddExp(%v, %v) = %v, want NaN", xy[0], xy[1], got)
		}
	}
}
