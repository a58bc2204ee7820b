package eager

import "github.com/mingru/scans"

// Float is the element type of the generic kernels: float32 for the
// Backend (f32 accumulation), float64 for references in tests and
// benchmarks.
type Float interface{ ~float32 | ~float64 }

// LinearForward computes linear_scan, h_t = a_t * h_{t-1} + b_t
// elementwise with h_{-1} = h0 (zeros when h0 is nil). a, b and h are
// (B,T,D) with D = d.N, h0 is (B,D). Every element of h is written.
//
// The kernels assume the caller validated the sizes; they are the math
// that the Backend runs in float32 and that tests run in float64.
func LinearForward[F Float](d scans.Dims, a, b, h0, h []F) {
	T, N := d.T, d.N
	forLanes(d, 2*T, func(bi, n0, n1 int) {
		o := bi * T * N
		for n := n0; n < n1; n++ {
			var p F
			if h0 != nil {
				p = h0[bi*N+n]
			}
			h[o+n] = a[o+n]*p + b[o+n]
		}
		for t := 1; t < T; t++ {
			o := (bi*T + t) * N
			q := o - N
			for n := n0; n < n1; n++ {
				h[o+n] = a[o+n]*h[q+n] + b[o+n]
			}
		}
	})
}

// LinearBackward is linear_scan's vector-Jacobian product. It reads the
// forward's inputs a, h0 (nil for zeros) and output h, and the output's
// gradient dh, and writes da and db (B,T,D), and dh0 (B,D) when dh0 is not
// nil. The adjoint is one reverse scan: G_t = dh_t + a_{t+1} G_{t+1},
// db_t = G_t, da_t = G_t h_{t-1}, dh0 = a_0 G_0.
func LinearBackward[F Float](d scans.Dims, a, h0, h, dh, da, db, dh0 []F) {
	T, N := d.T, d.N
	forLanes(d, 3*T, func(bi, n0, n1 int) {
		for t := T - 1; t >= 0; t-- {
			o := (bi*T + t) * N
			if t == T-1 {
				copy(db[o+n0:o+n1], dh[o+n0:o+n1])
			} else {
				u := o + N
				for n := n0; n < n1; n++ {
					db[o+n] = dh[o+n] + a[u+n]*db[u+n]
				}
			}
			if t > 0 {
				q := o - N
				for n := n0; n < n1; n++ {
					da[o+n] = db[o+n] * h[q+n]
				}
				continue
			}
			for n := n0; n < n1; n++ {
				var p F
				if h0 != nil {
					p = h0[bi*N+n]
				}
				da[o+n] = db[o+n] * p
			}
		}
		if dh0 != nil {
			o := bi * T * N
			for n := n0; n < n1; n++ {
				dh0[bi*N+n] = a[o+n] * db[o+n]
			}
		}
	})
}
