// Package reference is the float64 reference backend of the minGRU scans:
// every operation computed the plainest way in float64, sharing no code
// with package eager, so that the conformance matrix holds eager to an
// independent definition.
package reference

import (
	"errors"
	"fmt"
	"math"

	"github.com/mingru/scans"
)

// New returns the float64 reference backend: every operation written
// the plainest way (one sequential loop per lane, the Givens rotations
// applied one pair at a time, the log-space scan as a running
// log-add-exp), computed in float64 and rounded to the input's type only at
// the end. It shares no code with package eager, so that comparing eager
// with it checks eager's algorithms and not only its precision. It is slow;
// use it for checks, not for work.
//
// Its tensors are host tensors (*scans.Host); Upload and Download copy.
func New() scans.Backend { return backend{} }

// Name is the name New's backend reports.
const Name = "float64"

type backend struct{}

func (backend) Name() string { return Name }

func (backend) Status() scans.Status {
	return scans.Status{Backend: Name, Available: true, Device: "host (float64 reference)"}
}

func (backend) Supports(scans.Op, scans.Dims, scans.DType) error { return nil }

func (backend) Upload(h *scans.Host) (scans.Tensor, error) {
	if h == nil {
		return nil, errors.New("float64: Upload: nil tensor")
	}
	return h.Clone(), nil
}

func (backend) Download(t scans.Tensor) (*scans.Host, error) {
	h, ok := t.(*scans.Host)
	if !ok || h == nil {
		return nil, fmt.Errorf("float64: Download: not a host tensor (%T)", t)
	}
	return h.Clone(), nil
}

func (backend) Release(scans.Tensor) error { return nil }

// Run runs a call through the reference's own method for it.
func (r backend) Run(c *scans.Call) (out []scans.Tensor, err error) {
	if c == nil {
		return nil, errors.New("float64: Run: nil call")
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	a := c.Args
	var g [4]scans.Tensor
	switch {
	case c.Op == scans.OpLinearScan && c.Dir == scans.Forward:
		g[0], err = r.LinearScan(a[0], a[1], a[2])
	case c.Op == scans.OpLinearScan:
		g[0], g[1], g[2], err = r.LinearScanBackward(a[0], a[1], a[2], a[3], a[4])
	case c.Op == scans.OpMatrixScan && c.Dir == scans.Forward:
		g[0], err = r.MatrixScan(a[0], a[1], a[2])
	case c.Op == scans.OpMatrixScan:
		g[0], g[1], g[2], err = r.MatrixScanBackward(a[0], a[1], a[2], a[3], a[4])
	case c.Op == scans.OpMatrixAffineScan && c.Dir == scans.Forward:
		g[0], err = r.MatrixAffineScan(a[0], a[1], a[2])
	case c.Op == scans.OpMatrixAffineScan:
		g[0], g[1], g[2], err = r.MatrixAffineScanBackward(a[0], a[1], a[2], a[3], a[4])
	case c.Op == scans.OpParallelScanLog && c.Dir == scans.Forward:
		g[0], err = r.ParallelScanLog(a[0], a[1])
	case c.Op == scans.OpParallelScanLog:
		g[0], g[1], err = r.ParallelScanLogBackward(a[0], a[1], a[2], a[3])
	case c.Op == scans.OpGivensScan && c.Dir == scans.Forward:
		g[0], err = r.GivensScan(a[0], a[1], a[2], a[3])
	case c.Op == scans.OpGivensScan:
		g[0], g[1], g[2], g[3], err = r.GivensScanBackward(a[0], a[1], a[2], a[3], a[4], a[5])
	case c.Op == scans.OpMingruScan && c.Dir == scans.Forward:
		g[0], err = r.MingruScan(a[0], a[1], a[2])
	case c.Op == scans.OpMingruScan:
		g[0], g[1], g[2], err = r.MingruScanBackward(a[0], a[1], a[2], a[3], a[4])
	default:
		return nil, fmt.Errorf("float64: %s: no reference", c.Op)
	}
	if err != nil {
		return nil, err
	}
	return g[:len(c.Spec().Results(c.Dir))], nil
}

// f64 widens a host tensor (nil for an absent one).
func f64(t scans.Tensor) ([]float64, error) {
	if scans.IsNil(t) {
		return nil, nil
	}
	h, ok := t.(*scans.Host)
	if !ok {
		return nil, fmt.Errorf("float64: want host tensors, got %T on %s", t, t.Location())
	}
	return h.Float64s(), nil
}

func f64s(ts ...scans.Tensor) ([][]float64, error) {
	out := make([][]float64, len(ts))
	for i, t := range ts {
		var err error
		if out[i], err = f64(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// store rounds vals to dt in a new host tensor.
func store(dt scans.DType, vals []float64, shape []int) (scans.Tensor, error) {
	f := make([]float32, len(vals))
	for i, v := range vals {
		f[i] = float32(v)
	}
	return scans.Convert(dt, f, shape...)
}

func (backend) LinearScan(a, b, h0 scans.Tensor) (scans.Tensor, error) {
	d, err := scans.CheckLinearScan(a, b, h0)
	if err != nil {
		return nil, err
	}
	return affineForward(a.DType(), d, a, b, h0, a.Shape())
}

func (backend) LinearScanBackward(a, b, h0, h, dh scans.Tensor) (scans.Tensor, scans.Tensor, scans.Tensor, error) {
	d, err := scans.CheckLinearScanBackward(a, b, h0, h, dh)
	if err != nil {
		return nil, nil, nil, err
	}
	return affineBackward(d, a, b, h0, h, dh)
}

func (backend) MatrixScan(A, b, h0 scans.Tensor) (scans.Tensor, error) {
	d, err := scans.CheckMatrixScan(A, b, h0)
	if err != nil {
		return nil, err
	}
	return affineForward(A.DType(), d, A, b, h0, b.Shape())
}

func (backend) MatrixScanBackward(A, b, h0, h, dh scans.Tensor) (scans.Tensor, scans.Tensor, scans.Tensor, error) {
	d, err := scans.CheckMatrixScanBackward(A, b, h0, h, dh)
	if err != nil {
		return nil, nil, nil, err
	}
	return affineBackward(d, A, b, h0, h, dh)
}

func (backend) MatrixAffineScan(A, X, H0 scans.Tensor) (scans.Tensor, error) {
	d, err := scans.CheckMatrixAffineScan(A, X, H0)
	if err != nil {
		return nil, err
	}
	return affineForward(A.DType(), d, A, X, H0, X.Shape())
}

func (backend) MatrixAffineScanBackward(A, X, H0, H, dH scans.Tensor) (scans.Tensor, scans.Tensor, scans.Tensor, error) {
	d, err := scans.CheckMatrixAffineScanBackward(A, X, H0, H, dH)
	if err != nil {
		return nil, nil, nil, err
	}
	return affineBackward(d, A, X, H0, H, dH)
}

// affineForward runs H_t = A_t H_{t-1} + X_t per lane (b, n), with
// A (k x k) and H (k x v) blocks; linear_scan is k = v = 1 and matrix_scan
// k = 2, v = 1, in the same memory layout.
func affineForward(dt scans.DType, d scans.Dims, At, Xt, H0t scans.Tensor, outShape []int) (scans.Tensor, error) {
	in, err := f64s(At, Xt, H0t)
	if err != nil {
		return nil, err
	}
	return store(dt, affineFwd(d, in[0], in[1], in[2]), outShape)
}

func affineFwd(d scans.Dims, A, X, H0 []float64) []float64 {
	k, v := d.K, d.V
	kk, kv := k*k, k*v
	H := make([]float64, len(X))
	prev := make([]float64, kv)
	for b := 0; b < d.B; b++ {
		for n := 0; n < d.N; n++ {
			if H0 != nil {
				copy(prev, H0[(b*d.N+n)*kv:])
			} else {
				clear(prev)
			}
			for t := 0; t < d.T; t++ {
				blk := (b*d.T+t)*d.N + n
				a, x, h := A[blk*kk:(blk+1)*kk], X[blk*kv:(blk+1)*kv], H[blk*kv:(blk+1)*kv]
				for i := 0; i < k; i++ {
					for j := 0; j < v; j++ {
						s := x[i*v+j]
						for m := 0; m < k; m++ {
							s += a[i*k+m] * prev[m*v+j]
						}
						h[i*v+j] = s
					}
				}
				copy(prev, h)
			}
		}
	}
	return H
}

// affineBackward is the adjoint: G_t = dH_t + A_{t+1}^T G_{t+1},
// dX_t = G_t, dA_t = G_t H_{t-1}^T (H_{-1} = H0 or 0), dH0 = A_0^T G_0.
func affineBackward(d scans.Dims, At, Xt, H0t, Ht, dHt scans.Tensor) (dA, dX, dH0 scans.Tensor, err error) {
	in, err := f64s(At, H0t, Ht, dHt)
	if err != nil {
		return nil, nil, nil, err
	}
	gA, gX, gH0 := affineBwd(d, in[0], in[1], in[2], in[3])
	dt := At.DType()
	if dA, err = store(dt, gA, At.Shape()); err != nil {
		return nil, nil, nil, err
	}
	if dX, err = store(dt, gX, Ht.Shape()); err != nil {
		return nil, nil, nil, err
	}
	if gH0 != nil {
		if dH0, err = store(dt, gH0, H0t.Shape()); err != nil {
			return nil, nil, nil, err
		}
	}
	return dA, dX, dH0, nil
}

func affineBwd(d scans.Dims, A, H0, H, dH []float64) (gA, gX, gH0 []float64) {
	k, v := d.K, d.V
	kk, kv := k*k, k*v
	gA = make([]float64, len(A))
	gX = make([]float64, len(H))
	if H0 != nil {
		gH0 = make([]float64, len(H0))
	}
	carry := make([]float64, kv) // A_{t+1}^T G_{t+1}
	G := make([]float64, kv)
	for b := 0; b < d.B; b++ {
		for n := 0; n < d.N; n++ {
			clear(carry)
			for t := d.T - 1; t >= 0; t-- {
				blk := (b*d.T+t)*d.N + n
				for i := range G {
					G[i] = dH[blk*kv+i] + carry[i]
				}
				copy(gX[blk*kv:], G)
				var prev []float64 // H_{t-1}
				switch {
				case t > 0:
					p := (b*d.T+t-1)*d.N + n
					prev = H[p*kv : (p+1)*kv]
				case H0 != nil:
					prev = H0[(b*d.N+n)*kv : (b*d.N+n+1)*kv]
				}
				a, ga := A[blk*kk:(blk+1)*kk], gA[blk*kk:(blk+1)*kk]
				for i := 0; i < k; i++ {
					for m := 0; m < k; m++ {
						s := 0.0
						if prev != nil {
							for j := 0; j < v; j++ {
								s += G[i*v+j] * prev[m*v+j]
							}
						}
						ga[i*k+m] = s
					}
				}
				for m := 0; m < k; m++ {
					for j := 0; j < v; j++ {
						s := 0.0
						for i := 0; i < k; i++ {
							s += a[i*k+m] * G[i*v+j]
						}
						carry[m*v+j] = s
					}
				}
			}
			if gH0 != nil {
				copy(gH0[(b*d.N+n)*kv:], carry)
			}
		}
	}
	return gA, gX, gH0
}

// ParallelScanLog runs the scan in log space: with lh_{-1} = lv_0,
// lh_t = logaddexp(lc_t + lh_{t-1}, lv_{t+1}) and h_t = exp(lh_t), which
// neither overflows nor underflows where the linear form would.
func (backend) ParallelScanLog(lct, lvt scans.Tensor) (scans.Tensor, error) {
	d, err := scans.CheckParallelScanLog(lct, lvt)
	if err != nil {
		return nil, err
	}
	in, err := f64s(lct, lvt)
	if err != nil {
		return nil, err
	}
	return store(lct.DType(), logFwd(d, in[0], in[1]), lct.Shape())
}

func logFwd(d scans.Dims, lc, lv []float64) []float64 {
	D := d.N
	h := make([]float64, len(lc))
	for b := 0; b < d.B; b++ {
		for c := 0; c < D; c++ {
			lh := lv[(b*(d.T+1))*D+c]
			for t := 0; t < d.T; t++ {
				lh = logAddExp(lc[(b*d.T+t)*D+c]+lh, lv[(b*(d.T+1)+t+1)*D+c])
				h[(b*d.T+t)*D+c] = math.Exp(lh)
			}
		}
	}
	return h
}

func logAddExp(x, y float64) float64 {
	if x < y {
		x, y = y, x
	}
	if math.IsInf(x, -1) {
		return x
	}
	if math.IsNaN(x) || math.IsNaN(y) {
		return math.NaN()
	}
	return x + math.Log1p(math.Exp(y-x))
}

// ParallelScanLogBackward: G_t = dh_t + exp(lc_{t+1}) G_{t+1};
// dlv_{t+1} = G_t exp(lv_{t+1}); dlc_t = G_t exp(lc_t) h_{t-1} with
// h_{-1} = exp(lv_0); dlv_0 = exp(lc_0) G_0 exp(lv_0).
func (backend) ParallelScanLogBackward(lct, lvt, ht, dht scans.Tensor) (scans.Tensor, scans.Tensor, error) {
	d, err := scans.CheckParallelScanLogBackward(lct, lvt, ht, dht)
	if err != nil {
		return nil, nil, err
	}
	in, err := f64s(lct, lvt, ht, dht)
	if err != nil {
		return nil, nil, err
	}
	glc, glv := logBwd(d, in[0], in[1], in[2], in[3])
	dt := lct.DType()
	dlc, err := store(dt, glc, lct.Shape())
	if err != nil {
		return nil, nil, err
	}
	dlv, err := store(dt, glv, lvt.Shape())
	if err != nil {
		return nil, nil, err
	}
	return dlc, dlv, nil
}

func logBwd(d scans.Dims, lc, lv, h, dh []float64) (glc, glv []float64) {
	D := d.N
	glc = make([]float64, len(lc))
	glv = make([]float64, len(lv))
	for b := 0; b < d.B; b++ {
		for c := 0; c < D; c++ {
			G := 0.0
			for t := d.T - 1; t >= 0; t-- {
				i := (b*d.T+t)*D + c
				if t+1 < d.T {
					G = dh[i] + math.Exp(lc[i+D])*G
				} else {
					G = dh[i]
				}
				glv[(b*(d.T+1)+t+1)*D+c] = G * math.Exp(lv[(b*(d.T+1)+t+1)*D+c])
				if t > 0 {
					glc[i] = G * math.Exp(lc[i]) * h[i-D]
				} else {
					glc[i] = G * math.Exp(lc[i]+lv[(b*(d.T+1))*D+c])
				}
			}
			i0 := (b * d.T) * D
			glv[(b*(d.T+1))*D+c] = G * math.Exp(lc[i0+c]+lv[(b*(d.T+1))*D+c])
		}
	}
	return glc, glv
}

// GivensScan: h_t = sigma_t * R(theta_t) h_{t-1} + x_t, the rotations
// applied pair by pair.
func (backend) GivensScan(thetat, sigmat, xt, h0t scans.Tensor) (scans.Tensor, error) {
	d, err := scans.CheckGivensScan(thetat, sigmat, xt, h0t)
	if err != nil {
		return nil, err
	}
	in, err := f64s(thetat, sigmat, xt, h0t)
	if err != nil {
		return nil, err
	}
	return store(sigmat.DType(), givensFwd(d, in[0], in[1], in[2], in[3]), sigmat.Shape())
}

func givensFwd(d scans.Dims, theta, sigma, x, h0 []float64) []float64 {
	k := d.K
	h := make([]float64, len(x))
	st := make([]float64, k)
	for b := 0; b < d.B; b++ {
		for n := 0; n < d.N; n++ {
			if h0 != nil {
				copy(st, h0[(b*d.N+n)*k:])
			} else {
				clear(st)
			}
			for t := 0; t < d.T; t++ {
				blk := (b*d.T+t)*d.N + n
				Rotate(k, theta[blk*(k-1):(blk+1)*(k-1)], st, nil)
				for i := 0; i < k; i++ {
					st[i] = sigma[blk*k+i]*st[i] + x[blk*k+i]
				}
				copy(h[blk*k:], st)
			}
		}
	}
	return h
}

// GivensScanBackward walks the adjoint G_t = dh_t + A_{t+1}^T G_{t+1} with
// A_t = diag(sigma_t) L2(theta_t) L1(theta_t), recomputing each step's
// rotations from h_{t-1} (the stored forward output): with y = L1 h_{t-1}
// and u = L2 y, dsigma_t = G_t * u, and each rotation of a pair (i,j)
// whose outputs are (p_i, p_j) and whose output gradient is (g_i, g_j)
// contributes dtheta = g_j p_i - g_i p_j.
func (backend) GivensScanBackward(thetat, sigmat, xt, h0t, ht, dht scans.Tensor) (dTheta, dSigma, dx, dh0 scans.Tensor, err error) {
	d, err := scans.CheckGivensScanBackward(thetat, sigmat, xt, h0t, ht, dht)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	in, err := f64s(thetat, sigmat, h0t, ht, dht)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	gTheta, gSigma, gx, gh0 := givensBwd(d, in[0], in[1], in[2], in[3], in[4])
	dt := sigmat.DType()
	if dTheta, err = store(dt, gTheta, thetat.Shape()); err != nil {
		return nil, nil, nil, nil, err
	}
	if dSigma, err = store(dt, gSigma, sigmat.Shape()); err != nil {
		return nil, nil, nil, nil, err
	}
	if dx, err = store(dt, gx, sigmat.Shape()); err != nil {
		return nil, nil, nil, nil, err
	}
	if gh0 != nil {
		if dh0, err = store(dt, gh0, h0t.Shape()); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	return dTheta, dSigma, dx, dh0, nil
}

func givensBwd(d scans.Dims, theta, sigma, h0, h, dh []float64) (gTheta, gSigma, gx, gh0 []float64) {
	k := d.K
	first, second := scans.GivensAngles(k)
	gTheta = make([]float64, len(theta))
	gSigma = make([]float64, len(sigma))
	gx = make([]float64, len(h))
	if h0 != nil {
		gh0 = make([]float64, len(h0))
	}
	carry := make([]float64, k)
	G := make([]float64, k)
	y := make([]float64, k)
	u := make([]float64, k)
	g := make([]float64, k)
	for b := 0; b < d.B; b++ {
		for n := 0; n < d.N; n++ {
			clear(carry)
			for t := d.T - 1; t >= 0; t-- {
				blk := (b*d.T+t)*d.N + n
				for i := range G {
					G[i] = dh[blk*k+i] + carry[i]
				}
				copy(gx[blk*k:], G)
				switch {
				case t > 0:
					copy(u, h[((b*d.T+t-1)*d.N+n)*k:])
				case h0 != nil:
					copy(u, h0[(b*d.N+n)*k:])
				default:
					clear(u)
				}
				th := theta[blk*(k-1) : (blk+1)*(k-1)]
				gth := gTheta[blk*(k-1) : (blk+1)*(k-1)]
				Rotate(k, th, u, y) // y = L1 h_{t-1}, u = L2 y
				for i := 0; i < k; i++ {
					gSigma[blk*k+i] = G[i] * u[i]
					g[i] = sigma[blk*k+i] * G[i]
				}
				for q := second - 1; q >= 0; q-- {
					i, j := 2*q+1, 2*q+2
					gth[first+q] = g[j]*u[i] - g[i]*u[j]
					unrot(th[first+q], g, i, j)
				}
				for p := first - 1; p >= 0; p-- {
					i, j := 2*p, 2*p+1
					gth[p] = g[j]*y[i] - g[i]*y[j]
					unrot(th[p], g, i, j)
				}
				copy(carry, g)
			}
			if gh0 != nil {
				copy(gh0[(b*d.N+n)*k:], carry)
			}
		}
	}
	return gTheta, gSigma, gx, gh0
}

// unrot applies the transpose of the rotation of pair (i,j) by th to g.
func unrot(th float64, g []float64, i, j int) {
	s, c := math.Sincos(th)
	gi, gj := g[i], g[j]
	g[i] = c*gi + s*gj
	g[j] = -s*gi + c*gj
}

// Rotate applies R(angles) to x in place. When mid is not nil (len k) it
// receives x after the first layer of rotations.
func Rotate(k int, angles []float64, x, mid []float64) {
	first, second := scans.GivensAngles(k)
	for p := 0; p < first; p++ {
		rot(angles[p], x, 2*p, 2*p+1)
	}
	if mid != nil {
		copy(mid, x)
	}
	for q := 0; q < second; q++ {
		rot(angles[first+q], x, 2*q+1, 2*q+2)
	}
}

func rot(th float64, x []float64, i, j int) {
	s, c := math.Sincos(th)
	xi, xj := x[i], x[j]
	x[i] = c*xi - s*xj
	x[j] = s*xi + c*xj
}
