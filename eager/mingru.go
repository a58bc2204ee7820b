package eager

import (
	"math"

	"github.com/mingru/scans"
)

// softplus is log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|)).
func softplus[F Float](x F) F {
	v := float64(x)
	return F(math.Max(v, 0) + math.Log1p(math.Exp(-math.Abs(v))))
}

// sigmoid is 1 / (1 + exp(-x)), formed from the side that does not
// overflow.
func sigmoid[F Float](x F) F {
	v := float64(x)
	if v >= 0 {
		return F(1 / (1 + math.Exp(-v)))
	}
	e := math.Exp(v)
	return F(e / (1 + e))
}

// mingruLogG is log g(x): log(x + 0.5) for x >= 0, -softplus(-x) below.
func mingruLogG[F Float](x F) F {
	if x >= 0 {
		return log(x + 0.5)
	}
	return -softplus(-x)
}

// mingruG is g(x) and its derivative: x + 0.5 and 1 for x >= 0,
// sigmoid(x) and sigmoid(x) (1 - sigmoid(x)) below.
func mingruG[F Float](x F) (g, dg F) {
	if x >= 0 {
		return x + 0.5, 1
	}
	s := sigmoid(x)
	return s, s * (1 - s)
}

// MingruForward computes mingru_scan, a minGRU layer's recurrence from its
// pre-activations k and x (B,T,D), with h0 (B,D) or nil (zeros), into h
// (B,T,D), in log space:
//
//	log h_{-1} = log h0                      (-Inf when h0 is nil)
//	log h_t    = logaddexp(-softplus(k_t) + log h_{t-1}, -softplus(-k_t) + log g(x_t))
//	h_t        = exp(log h_t)
//
// It is parallel_scan_log with log_coeffs = -softplus(k) and log_values =
// [log h0, -softplus(-k) + log g(x)], the gates formed as they are used.
// A negative h0 entry makes its lane NaN.
func MingruForward[F Float](d scans.Dims, k, x, h0, h []F) {
	T, N := d.T, d.N
	forLanes(d, 60*T, func(bi, n0, n1 int) {
		lh := make([]F, n1-n0)
		for n := n0; n < n1; n++ {
			lh[n-n0] = F(math.Inf(-1))
			if h0 != nil {
				lh[n-n0] = log(h0[bi*N+n])
			}
		}
		for t := 0; t < T; t++ {
			o := (bi*T + t) * N
			for n := n0; n < n1; n++ {
				kt := k[o+n]
				y := logAddExp(-softplus(kt)+lh[n-n0], -softplus(-kt)+mingruLogG(x[o+n]))
				lh[n-n0] = y
				h[o+n] = exp(y)
			}
		}
	})
}

// MingruBackward is mingru_scan's vector-Jacobian product. It reads k, x,
// h0 (or nil), the forward output h and its gradient dh, and writes dk,
// dx (B,T,D) and dh0 (B,D; nil when h0 is). With a_t = sigmoid(-k_t),
// z_t = sigmoid(k_t) and h_{-1} = h0 (zeros when nil):
//
//	G_t  = dh_t + a_{t+1} G_{t+1}
//	dk_t = G_t a_t z_t (g(x_t) - h_{t-1})
//	dx_t = G_t z_t g'(x_t)
//	dh0  = a_0 G_0
//
// A lane whose h0 entry is negative (or NaN) gets NaN in dk, dx and dh0.
func MingruBackward[F Float](d scans.Dims, k, x, h0, h, dh, dk, dx, dh0 []F) {
	T, N := d.T, d.N
	nan := F(math.NaN())
	forLanes(d, 80*T, func(bi, n0, n1 int) {
		for n := n0; n < n1; n++ {
			var hp0 F
			bad := false
			if h0 != nil {
				hp0 = h0[bi*N+n]
				bad = !(hp0 >= 0)
			}
			var G, a F
			for t := T - 1; t >= 0; t-- {
				i := (bi*T+t)*N + n
				G = dh[i] + a*G
				kt := k[i]
				a = sigmoid(-kt)
				z := sigmoid(kt)
				g, dg := mingruG(x[i])
				hp := hp0
				if t > 0 {
					hp = h[i-N]
				}
				dk[i], dx[i] = G*a*z*(g-hp), G*z*dg
				if bad {
					dk[i], dx[i] = nan, nan
				}
			}
			if dh0 != nil {
				dh0[bi*N+n] = a * G
				if bad {
					dh0[bi*N+n] = nan
				}
			}
		}
	})
}
