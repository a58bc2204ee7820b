package eager

import "math"

// The references below are written straight from SPEC's formulas, in
// float64, one lane and one step at a time, sharing no code with the
// kernels.

// refLinear: h_t = a_t * h_{t-1} + b_t, h_{-1} = h0 or 0.
func refLinear(B, T, D int, a, b, h0 []float64) []float64 {
	h := make([]float64, B*T*D)
	for bi := 0; bi < B; bi++ {
		for n := 0; n < D; n++ {
			prev := 0.0
			if h0 != nil {
				prev = h0[bi*D+n]
			}
			for t := 0; t < T; t++ {
				i := (bi*T+t)*D + n
				prev = a[i]*prev + b[i]
				h[i] = prev
			}
		}
	}
	return h
}

// refAffine: H_t = A_t H_{t-1} + X_t per block, H_{-1} = H0 or 0.
func refAffine(B, T, N, k, v int, A, X, H0 []float64) []float64 {
	H := make([]float64, B*T*N*k*v)
	for bi := 0; bi < B; bi++ {
		for n := 0; n < N; n++ {
			prev := make([]float64, k*v)
			if H0 != nil {
				copy(prev, H0[(bi*N+n)*k*v:])
			}
			for t := 0; t < T; t++ {
				blk := (bi*T+t)*N + n
				cur := make([]float64, k*v)
				for i := 0; i < k; i++ {
					for c := 0; c < v; c++ {
						s := X[blk*k*v+i*v+c]
						for j := 0; j < k; j++ {
							s += A[blk*k*k+i*k+j] * prev[j*v+c]
						}
						cur[i*v+c] = s
					}
				}
				copy(H[blk*k*v:], cur)
				prev = cur
			}
		}
	}
	return H
}

// refLogAddExp is log(exp(x)+exp(y)) for finite or -Inf x, y.
func refLogAddExp(x, y float64) float64 {
	m := math.Max(x, y)
	if math.IsInf(m, -1) {
		return m
	}
	return m + math.Log(math.Exp(x-m)+math.Exp(y-m))
}

// refLog is SPEC's closed form of parallel_scan_log: with a*_0 = 0 and
// a*_s = sum_{r<s} lc_r, h_t = exp(a*_{t+1} + logcumsumexp_{s<=t+1}(lv_s - a*_s)).
func refLog(B, T, D int, lc, lv []float64) []float64 {
	h := make([]float64, B*T*D)
	for bi := 0; bi < B; bi++ {
		for n := 0; n < D; n++ {
			astar := 0.0                      // a*_s
			lse := lv[(bi*(T+1))*D+n] - astar // s = 0
			for t := 0; t < T; t++ {
				astar += lc[(bi*T+t)*D+n] // a*_{t+1}
				lse = refLogAddExp(lse, lv[(bi*(T+1)+t+1)*D+n]-astar)
				h[(bi*T+t)*D+n] = math.Exp(astar + lse)
			}
		}
	}
	return h
}

// refMingru is the minGRU recurrence in its linear form,
// h_t = (1 - z_t) h_{t-1} + z_t g(x_t), z = 1 / (1 + exp(-k)).
func refMingru(B, T, D int, k, x, h0 []float64) []float64 {
	h := make([]float64, B*T*D)
	for bi := 0; bi < B; bi++ {
		for n := 0; n < D; n++ {
			prev := 0.0
			if h0 != nil {
				prev = h0[bi*D+n]
			}
			for t := 0; t < T; t++ {
				i := (bi*T+t)*D + n
				z := 1 / (1 + math.Exp(-k[i]))
				g := x[i] + 0.5
				if x[i] < 0 {
					g = 1 / (1 + math.Exp(-x[i]))
				}
				prev = (1-z)*prev + z*g
				h[i] = prev
			}
		}
	}
	return h
}

// refGivens: h_t = sigma_t * R(theta_t) h_{t-1} + x_t with R an explicit
// matrix product (rotMatrix).
func refGivens(B, T, N, k int, theta, sigma, x, h0 []float64) []float64 {
	h := make([]float64, B*T*N*k)
	for bi := 0; bi < B; bi++ {
		for n := 0; n < N; n++ {
			prev := make([]float64, k)
			if h0 != nil {
				copy(prev, h0[(bi*N+n)*k:])
			}
			for t := 0; t < T; t++ {
				l := (bi*T+t)*N + n
				R := rotMatrix(k, theta[l*(k-1):(l+1)*(k-1)])
				cur := make([]float64, k)
				for i := 0; i < k; i++ {
					var s float64
					for j := 0; j < k; j++ {
						s += R[i*k+j] * prev[j]
					}
					cur[i] = sigma[l*k+i]*s + x[l*k+i]
				}
				copy(h[l*k:], cur)
				prev = cur
			}
		}
	}
	return h
}
