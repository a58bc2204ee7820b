package eager

import (
	"math"

	"github.com/mingru/scans"
)

// exp and log in float64, rounded to F (correctly rounded for float32 in
// all but rare cases).
func exp[F Float](x F) F { return F(math.Exp(float64(x))) }
func log[F Float](x F) F { return F(math.Log(float64(x))) }

// logAddExp returns log(exp(x) + exp(y)) without overflow or underflow:
// max(x,y) + log1p(exp(-|x-y|)). Infinities behave as the limit (-Inf is
// the identity, +Inf absorbs); NaN propagates.
func logAddExp[F Float](x, y F) F {
	if x != x || y != y {
		return x + y
	}
	if x < y {
		x, y = y, x
	}
	if y == F(math.Inf(-1)) || x == F(math.Inf(1)) {
		return x
	}
	return x + F(math.Log1p(math.Exp(float64(y-x))))
}

// LogForward computes parallel_scan_log in log space,
// h_t = exp(lc_t) h_{t-1} + exp(lv_{t+1}) with h_{-1} = exp(lv_0), as
//
//	log h_{-1} = lv_0
//	log h_t    = logaddexp(lc_t + log h_{t-1}, lv_{t+1})
//	h_t        = exp(log h_t)
//
// per lane, carrying log h in F. logCoeffs and h are (B,T,D) with D = d.N,
// logValues is (B,T+1,D). The state never overflows or underflows, however
// large |log| gets; only the stored h_t = exp(log h_t) can, where the
// true value lies outside F's range.
func LogForward[F Float](d scans.Dims, logCoeffs, logValues, h []F) {
	T, N := d.T, d.N
	forLanes(d, 30*T, func(bi, n0, n1 int) {
		lh := make([]F, n1-n0)
		base := bi * (T + 1) * N
		copy(lh, logValues[base+n0:base+n1])
		for t := 0; t < T; t++ {
			o := (bi*T + t) * N
			v := base + (t+1)*N
			for n := n0; n < n1; n++ {
				x := logAddExp(logCoeffs[o+n]+lh[n-n0], logValues[v+n])
				lh[n-n0] = x
				h[o+n] = exp(x)
			}
		}
	})
}

// LogBackward is parallel_scan_log's vector-Jacobian product. It reads the
// forward's inputs and its output h and the output's gradient dh (B,T,D),
// and writes dLogCoeffs (B,T,D) and dLogValues (B,T+1,D):
//
//	G_t        = dh_t + exp(lc_{t+1}) G_{t+1}
//	dlv_{t+1}  = G_t exp(lv_{t+1})
//	dlc_t      = G_t exp(lc_t + log h_{t-1})   (log h_{-1} = lv_0)
//	dlv_0      = G_0 exp(lc_0 + lv_0)
//
// log h_{t-1} is taken from the stored output; where it is 0 the term is 0.
func LogBackward[F Float](d scans.Dims, logCoeffs, logValues, h, dh, dLogCoeffs, dLogValues []F) {
	T, N := d.T, d.N
	forLanes(d, 40*T, func(bi, n0, n1 int) {
		g := make([]F, n1-n0)
		base := bi * (T + 1) * N
		for t := T - 1; t >= 0; t-- {
			o := (bi*T + t) * N
			v := base + (t+1)*N
			for n := n0; n < n1; n++ {
				gt := dh[o+n]
				if t < T-1 {
					gt += exp(logCoeffs[o+N+n]) * g[n-n0]
				}
				g[n-n0] = gt
				dLogValues[v+n] = gt * exp(logValues[v+n])
				var lp F
				if t > 0 {
					lp = log(h[o-N+n])
				} else {
					lp = logValues[base+n]
				}
				dLogCoeffs[o+n] = gt * exp(logCoeffs[o+n]+lp)
			}
		}
		o := bi * T * N
		for n := n0; n < n1; n++ {
			dLogValues[base+n] = g[n-n0] * exp(logCoeffs[o+n]+logValues[base+n])
		}
	})
}
