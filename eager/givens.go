package eager

import (
	"math"

	"github.com/mingru/scans"
)

// rotation is one Givens rotation of the pair (i, j) by an angle with
// cosine c and sine s: x_i' = c x_i - s x_j, x_j' = s x_i + c x_j.
type rotation[F Float] struct {
	i, j int
	c, s F
}

// rotations fills rot with the k-1 rotations of one step from its angles
// th (k-1 of them): first the pairs (0,1), (2,3), ..., then (1,2), (3,4),
// ... (see scans.GivensAngles). rot[:first] is the first layer.
func rotations[F Float](k int, th []F, rot []rotation[F]) {
	first, second := scans.GivensAngles(k)
	for p := 0; p < first; p++ {
		s, c := math.Sincos(float64(th[p]))
		rot[p] = rotation[F]{2 * p, 2*p + 1, F(c), F(s)}
	}
	for q := 0; q < second; q++ {
		s, c := math.Sincos(float64(th[first+q]))
		rot[first+q] = rotation[F]{2*q + 1, 2*q + 2, F(c), F(s)}
	}
}

// apply rotates the vector x in place.
func (r rotation[F]) apply(x []F) {
	xi, xj := x[r.i], x[r.j]
	x[r.i] = r.c*xi - r.s*xj
	x[r.j] = r.s*xi + r.c*xj
}

// back propagates the gradient g of the rotation's output y (in place, to
// the gradient of its input) and returns the gradient of the angle.
func (r rotation[F]) back(y, g []F) F {
	gi, gj := g[r.i], g[r.j]
	dth := -gi*y[r.j] + gj*y[r.i]
	g[r.i] = r.c*gi + r.s*gj
	g[r.j] = -r.s*gi + r.c*gj
	return dth
}

// GivensForward computes the angle-fused Givens scan,
// h_t = sigma_t * R(theta_t) h_{t-1} + x_t, with h_{-1} = h0 (zeros when
// h0 is nil), never forming R. theta is (B,T,N,k-1), sigma, x and h are
// (B,T,N,k), h0 is (B,N,k), with k = d.K >= 2 (any k, odd included).
func GivensForward[F Float](d scans.Dims, theta, sigma, x, h0, h []F) {
	T, N, k := d.T, d.N, d.K
	forLanes(d, T*(30*k+6*k), func(bi, n0, n1 int) {
		rot := make([]rotation[F], k-1)
		y := make([]F, k)
		for n := n0; n < n1; n++ {
			for t := 0; t < T; t++ {
				l := (bi*T+t)*N + n
				switch {
				case t > 0:
					copy(y, h[(l-N)*k:][:k])
				case h0 != nil:
					copy(y, h0[(bi*N+n)*k:][:k])
				default:
					clear(y)
				}
				rotations(k, theta[l*(k-1):][:k-1], rot)
				for _, r := range rot {
					r.apply(y)
				}
				sg, xt, out := sigma[l*k:][:k], x[l*k:][:k], h[l*k:][:k]
				for r := range out {
					out[r] = sg[r]*y[r] + xt[r]
				}
			}
		}
	})
}

// GivensBackward is the angle-fused Givens scan's vector-Jacobian product.
// It reads the forward's inputs theta, sigma, h0 (nil for zeros) and output
// h, and the output's gradient dh, and writes dTheta, dSigma, dx and, when
// dh0 is not nil, dh0. It walks one reverse scan
// G_t = dh_t + A_{t+1}^T G_{t+1} with A^T g = R^T (sigma * g); at each step
// it recomputes the rotations and their intermediates from the stored
// h_{t-1}, so it never divides by sigma (dividing would amplify errors like
// sigma_min^-T):
//
//	u         = R_t h_{t-1}
//	dsigma_t  = G_t * u
//	dtheta_t  from sigma_t * G_t back through the second, then the first layer
//	dx_t      = G_t
func GivensBackward[F Float](d scans.Dims, theta, sigma, h0, h, dh, dTheta, dSigma, dx, dh0 []F) {
	T, N, k := d.T, d.N, d.K
	first, _ := scans.GivensAngles(k)
	forLanes(d, T*(30*k+20*k), func(bi, n0, n1 int) {
		rot := make([]rotation[F], k-1)
		y1 := make([]F, k)    // h_{t-1} after the first layer
		u := make([]F, k)     // after both layers: R_t h_{t-1}
		carry := make([]F, k) // A_{t+1}^T G_{t+1}
		for n := n0; n < n1; n++ {
			clear(carry)
			for t := T - 1; t >= 0; t-- {
				l := (bi*T+t)*N + n
				g := dx[l*k:][:k]
				dht := dh[l*k:][:k]
				for r := range g {
					g[r] = dht[r] + carry[r]
				}
				switch {
				case t > 0:
					copy(y1, h[(l-N)*k:][:k])
				case h0 != nil:
					copy(y1, h0[(bi*N+n)*k:][:k])
				default:
					clear(y1)
				}
				rotations(k, theta[l*(k-1):][:k-1], rot)
				for _, r := range rot[:first] {
					r.apply(y1)
				}
				copy(u, y1)
				for _, r := range rot[first:] {
					r.apply(u)
				}
				sg, ds := sigma[l*k:][:k], dSigma[l*k:][:k]
				for r := range g {
					ds[r] = g[r] * u[r]
					carry[r] = sg[r] * g[r]
				}
				dth := dTheta[l*(k-1):][:k-1]
				for p := k - 2; p >= first; p-- {
					dth[p] = rot[p].back(u, carry)
				}
				for p := first - 1; p >= 0; p-- {
					dth[p] = rot[p].back(y1, carry)
				}
			}
			if dh0 != nil {
				copy(dh0[(bi*N+n)*k:][:k], carry)
			}
		}
	})
}

// GivensMatrix materializes the Givens transitions A_t = diag(sigma_t)
// R(theta_t) as A (B,T,N,k,k), the input of the generic path
// (AffineForward with v = 1), against which the fused kernels are checked.
func GivensMatrix[F Float](d scans.Dims, theta, sigma, A []F) {
	T, N, k := d.T, d.N, d.K
	forLanes(d, T*(30*k+6*k*k), func(bi, n0, n1 int) {
		rot := make([]rotation[F], k-1)
		col := make([]F, k)
		for n := n0; n < n1; n++ {
			for t := 0; t < T; t++ {
				l := (bi*T+t)*N + n
				rotations(k, theta[l*(k-1):][:k-1], rot)
				a, sg := A[l*k*k:][:k*k], sigma[l*k:][:k]
				for c := 0; c < k; c++ { // column c of R is R e_c
					clear(col)
					col[c] = 1
					for _, r := range rot {
						r.apply(col)
					}
					for r := 0; r < k; r++ {
						a[r*k+c] = sg[r] * col[r]
					}
				}
			}
		}
	})
}

// GivensMatrixBackward chains the gradient dA (B,T,N,k,k) of the
// materialized transitions of GivensMatrix back to dTheta (B,T,N,k-1) and
// dSigma (B,T,N,k).
func GivensMatrixBackward[F Float](d scans.Dims, theta, sigma, dA, dTheta, dSigma []F) {
	T, N, k := d.T, d.N, d.K
	first, _ := scans.GivensAngles(k)
	forLanes(d, T*(30*k+12*k*k), func(bi, n0, n1 int) {
		rot := make([]rotation[F], k-1)
		y1 := make([]F, k)
		u := make([]F, k)
		g := make([]F, k)
		for n := n0; n < n1; n++ {
			for t := 0; t < T; t++ {
				l := (bi*T+t)*N + n
				rotations(k, theta[l*(k-1):][:k-1], rot)
				da, sg := dA[l*k*k:][:k*k], sigma[l*k:][:k]
				ds, dth := dSigma[l*k:][:k], dTheta[l*(k-1):][:k-1]
				clear(ds)
				clear(dth)
				for c := 0; c < k; c++ { // column c: u = R e_c, A e_c = sigma * u
					clear(y1)
					y1[c] = 1
					for _, r := range rot[:first] {
						r.apply(y1)
					}
					copy(u, y1)
					for _, r := range rot[first:] {
						r.apply(u)
					}
					for r := 0; r < k; r++ {
						ds[r] += da[r*k+c] * u[r]
						g[r] = sg[r] * da[r*k+c]
					}
					for p := k - 2; p >= first; p-- {
						dth[p] += rot[p].back(u, g)
					}
					for p := first - 1; p >= 0; p-- {
						dth[p] += rot[p].back(y1, g)
					}
				}
			}
		}
	})
}
