package reference

import (
	"math"

	"github.com/mingru/scans"
)

// MingruScan runs mingru_scan as SPEC defines it: parallel_scan_log with
// log_coeffs = -softplus(k) and log_values = [log h0, -softplus(-k) +
// log g(x)] (log h0 = -Inf when h0 is nil), in float64.
func (backend) MingruScan(kt, xt, h0t scans.Tensor) (scans.Tensor, error) {
	d, err := scans.CheckMingruScan(kt, xt, h0t)
	if err != nil {
		return nil, err
	}
	in, err := f64s(kt, xt, h0t)
	if err != nil {
		return nil, err
	}
	lc, lv := mingruGates(d, in[0], in[1], in[2])
	return store(kt.DType(), logFwd(d, lc, lv), kt.Shape())
}

// mingruGates forms the log-space gates of mingru_scan.
func mingruGates(d scans.Dims, k, x, h0 []float64) (lc, lv []float64) {
	D := d.N
	lc = make([]float64, len(k))
	lv = make([]float64, d.B*(d.T+1)*D)
	for b := 0; b < d.B; b++ {
		for c := 0; c < D; c++ {
			l0 := math.Inf(-1)
			if h0 != nil {
				l0 = math.Log(h0[b*D+c])
			}
			lv[b*(d.T+1)*D+c] = l0
			for t := 0; t < d.T; t++ {
				i := (b*d.T+t)*D + c
				lc[i] = -softplus(k[i])
				var lg float64
				if x[i] >= 0 {
					lg = math.Log(x[i] + 0.5)
				} else {
					lg = -softplus(-x[i])
				}
				lv[(b*(d.T+1)+t+1)*D+c] = -softplus(-k[i]) + lg
			}
		}
	}
	return lc, lv
}

func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

func sigmoid(x float64) float64 { return math.Exp(-softplus(-x)) }

// MingruScanBackward differentiates the linear form
// h_t = (1 - z_t) h_{t-1} + z_t g(x_t), z = sigmoid(k): with
// G_t = dh_t + (1 - z_{t+1}) G_{t+1}, dk_t = G_t z_t (1 - z_t)
// (g(x_t) - h_{t-1}), dx_t = G_t z_t g'(x_t), dh0 = (1 - z_0) G_0. A lane
// whose h0 entry is not >= 0 has NaN gradients, as the forward has NaN
// outputs there.
func (backend) MingruScanBackward(kt, xt, h0t, ht, dht scans.Tensor) (scans.Tensor, scans.Tensor, scans.Tensor, error) {
	d, err := scans.CheckMingruScanBackward(kt, xt, h0t, ht, dht)
	if err != nil {
		return nil, nil, nil, err
	}
	in, err := f64s(kt, xt, h0t, ht, dht)
	if err != nil {
		return nil, nil, nil, err
	}
	k, x, h0, h, dh := in[0], in[1], in[2], in[3], in[4]
	D := d.N
	gk := make([]float64, len(k))
	gx := make([]float64, len(k))
	var gh0 []float64
	if h0 != nil {
		gh0 = make([]float64, len(h0))
	}
	for b := 0; b < d.B; b++ {
		for c := 0; c < D; c++ {
			prev := 0.0
			if h0 != nil {
				prev = h0[b*D+c]
			}
			poison := 0.0
			if !(prev >= 0) {
				poison = math.NaN()
			}
			G := 0.0
			for t := d.T - 1; t >= 0; t-- {
				i := (b*d.T+t)*D + c
				if t+1 < d.T {
					G = dh[i] + (1-sigmoid(k[i+D]))*G
				} else {
					G = dh[i]
				}
				hp := prev
				if t > 0 {
					hp = h[i-D]
				}
				z := sigmoid(k[i])
				g, dg := x[i]+0.5, 1.0
				if x[i] < 0 {
					g = sigmoid(x[i])
					dg = g * (1 - g)
				}
				gk[i] = G*z*(1-z)*(g-hp) + poison
				gx[i] = G*z*dg + poison
			}
			if gh0 != nil {
				gh0[b*D+c] = (1-sigmoid(k[(b*d.T)*D+c]))*G + poison
			}
		}
	}
	dt := kt.DType()
	dk, err := store(dt, gk, kt.Shape())
	if err != nil {
		return nil, nil, nil, err
	}
	dx, err := store(dt, gx, xt.Shape())
	if err != nil {
		return nil, nil, nil, err
	}
	if gh0 == nil {
		return dk, dx, nil, nil
	}
	dh0, err := store(dt, gh0, h0t.Shape())
	if err != nil {
		return nil, nil, nil, err
	}
	return dk, dx, dh0, nil
}
