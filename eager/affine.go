package eager

import "github.com/mingru/scans"

// AffineForward computes matrix_affine_scan, H_t = A_t H_{t-1} + X_t per
// block, with H_{-1} = H0 (zeros when H0 is nil). A is (B,T,N,k,k), X and H
// are (B,T,N,k,v), H0 is (B,N,k,v), with k = d.K and v = d.V. matrix_scan
// is the case k = 2, v = 1.
func AffineForward[F Float](d scans.Dims, A, X, H0, H []F) {
	T, N, k, v := d.T, d.N, d.K, d.V
	kk, kv := k*k, k*v
	forLanes(d, 2*T*kk*v, func(bi, n0, n1 int) {
		zero := make([]F, kv)
		for n := n0; n < n1; n++ {
			prev := zero
			if H0 != nil {
				prev = H0[(bi*N+n)*kv:][:kv]
			}
			for t := 0; t < T; t++ {
				l := (bi*T+t)*N + n
				a := A[l*kk:][:kk]
				x := X[l*kv:][:kv]
				out := H[l*kv:][:kv]
				if v == 1 {
					for i := range out {
						s := x[i]
						for j, aij := range a[i*k:][:k] {
							s += aij * prev[j]
						}
						out[i] = s
					}
					prev = out
					continue
				}
				for i := 0; i < k; i++ { // row i: x_i + sum_j a_ij prev_j, j ascending
					oi, xi := out[i*v:][:v], x[i*v:][:v]
					for c := range oi {
						oi[c] = xi[c]
					}
					for j, aij := range a[i*k:][:k] {
						pj := prev[j*v:][:v]
						for c := range oi {
							oi[c] += aij * pj[c]
						}
					}
				}
				prev = out
			}
		}
	})
}

// AffineBackward is matrix_affine_scan's vector-Jacobian product. It reads
// the forward's inputs A, H0 (nil for zeros) and output H, and the output's
// gradient dH, and writes dA (B,T,N,k,k), dX (B,T,N,k,v) and, when dH0 is
// not nil, dH0 (B,N,k,v). One reverse scan: G_t = dH_t + A_{t+1}^T G_{t+1},
// dX_t = G_t, dA_t = G_t H_{t-1}^T, dH0 = A_0^T G_0.
func AffineBackward[F Float](d scans.Dims, A, H0, H, dH, dA, dX, dH0 []F) {
	T, N, k, v := d.T, d.N, d.K, d.V
	kk, kv := k*k, k*v
	forLanes(d, 4*T*kk*v, func(bi, n0, n1 int) {
		zero := make([]F, kv)
		for n := n0; n < n1; n++ {
			var next []F // G_{t+1}
			for t := T - 1; t >= 0; t-- {
				l := (bi*T+t)*N + n
				g := dX[l*kv:][:kv]
				dh := dH[l*kv:][:kv]
				if next == nil {
					copy(g, dh)
				} else {
					an := A[(l+N)*kk:][:kk] // A_{t+1}
					transposeMul(k, v, an, next, dh, g)
				}
				prev := zero
				switch {
				case t > 0:
					prev = H[(l-N)*kv:][:kv]
				case H0 != nil:
					prev = H0[(bi*N+n)*kv:][:kv]
				}
				da := dA[l*kk:][:kk]
				for i := 0; i < k; i++ {
					gi := g[i*v:][:v]
					for j := 0; j < k; j++ {
						pj := prev[j*v:][:v]
						var s F
						for c, gic := range gi {
							s += gic * pj[c]
						}
						da[i*k+j] = s
					}
				}
				next = g
			}
			if dH0 != nil {
				transposeMul(k, v, A[((bi*T)*N+n)*kk:][:kk], next, zero, dH0[(bi*N+n)*kv:][:kv])
			}
		}
	})
}

// transposeMul sets out = add + a^T g for a kxk block a and kxv blocks g,
// add and out, summing over j in ascending order.
func transposeMul[F Float](k, v int, a, g, add, out []F) {
	for i := 0; i < k; i++ {
		oi, ai := out[i*v:][:v], add[i*v:][:v]
		for c := range oi {
			oi[c] = ai[c]
		}
		for j := 0; j < k; j++ {
			aji := a[j*k+i]
			gj := g[j*v:][:v]
			for c := range oi {
				oi[c] += aji * gj[c]
			}
		}
	}
}
