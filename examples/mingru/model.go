package main

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/mingru/scans"
	"github.com/mingru/scans/dispatch"
)

// layer is one minGRU layer (Feng et al., "Were RNNs All We Needed?",
// 2024): from its input x_t, the gate pre-activation k_t = x_t Wz + bz and
// the hidden pre-activation u_t = x_t Wh + bh give
//
//	h_t = (1 - sigmoid(k_t)) h_{t-1} + sigmoid(k_t) g(u_t),
//
// g(u) = u + 0.5 for u >= 0 and sigmoid(u) for u < 0, h_{-1} = 0. The
// recurrence and its gradients are one mingru_scan call each way, which
// forms the gates in log space as it reads k and u.
type layer struct {
	in, out int
	wz, wh  *param // (in, out)
	bz, bh  *param // (1, out)

	// Saved by forward for backward.
	x       *mat.Dense // the input, (B*T) x in
	k, u, h scans.Tensor
	B, T    int
}

func newLayer(in, out int, rng *rand.Rand) *layer {
	scale := 1 / math.Sqrt(float64(in))
	l := &layer{in: in, out: out,
		wz: newParam(in, out, scale, rng), wh: newParam(in, out, scale, rng),
		bz: newParam(1, out, 0, rng), bh: newParam(1, out, 0, rng)}
	// Gates start mostly closed, so that early states carry over.
	for j := 0; j < out; j++ {
		l.bz.w.Set(0, j, -2)
	}
	return l
}

func (l *layer) params() []*param { return []*param{l.wz, l.wh, l.bz, l.bh} }

// forward maps x ((B*T) x in, row b*T+t) to h ((B*T) x out).
func (l *layer) forward(x *mat.Dense, B, T int) (*mat.Dense, error) {
	l.x, l.B, l.T = x, B, T
	D := l.out
	var err error
	if l.k, err = scans.FromFloat32(flat32(affine(x, l.wz.w, l.bz.w)), B, T, D); err != nil {
		return nil, err
	}
	if l.u, err = scans.FromFloat32(flat32(affine(x, l.wh.w, l.bh.w)), B, T, D); err != nil {
		return nil, err
	}
	if l.h, err = dispatch.MingruScan(l.k, l.u, nil); err != nil {
		return nil, err
	}
	return toDense(l.h, B*T, D)
}

// backward takes dh ((B*T) x out), accumulates the parameters' gradients
// and returns dx ((B*T) x in).
func (l *layer) backward(dh *mat.Dense) (*mat.Dense, error) {
	B, T, D := l.B, l.T, l.out
	dhT, err := scans.FromFloat32(flat32(dh), B, T, D)
	if err != nil {
		return nil, err
	}
	dkT, duT, _, err := dispatch.MingruScanBackward(l.k, l.u, nil, l.h, dhT)
	if err != nil {
		return nil, err
	}
	dk, err := toDense(dkT, B*T, D)
	if err != nil {
		return nil, err
	}
	du, err := toDense(duT, B*T, D)
	if err != nil {
		return nil, err
	}
	l.wz.accumulate(l.x, dk)
	l.wh.accumulate(l.x, du)
	l.bz.accumulateBias(dk)
	l.bh.accumulateBias(du)
	var dx mat.Dense
	dx.Mul(dk, l.wz.w.T())
	var dxu mat.Dense
	dxu.Mul(du, l.wh.w.T())
	dx.Add(&dx, &dxu)
	return &dx, nil
}

// affine is x W + b, b broadcast over the rows.
func affine(x, w, b *mat.Dense) *mat.Dense {
	r, _ := x.Dims()
	_, c := w.Dims()
	out := mat.NewDense(r, c, nil)
	out.Mul(x, w)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out.Set(i, j, out.At(i, j)+b.At(0, j))
		}
	}
	return out
}

func toDense(t scans.Tensor, rows, cols int) (*mat.Dense, error) {
	h, ok := t.(*scans.Host)
	if !ok {
		var err error
		if h, err = dispatch.Backend(t.Location()).Download(t); err != nil {
			return nil, err
		}
	}
	v := h.Float64s()
	return mat.NewDense(rows, cols, v), nil
}

func flat32(m *mat.Dense) []float32 {
	r, c := m.Dims()
	out := make([]float32, 0, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out = append(out, float32(m.At(i, j)))
		}
	}
	return out
}

// param is a weight matrix with its gradient and Adam's moments.
type param struct {
	w, g, m, v *mat.Dense
}

func newParam(r, c int, scale float64, rng *rand.Rand) *param {
	w := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			w.Set(i, j, scale*rng.NormFloat64())
		}
	}
	return &param{w: w, g: mat.NewDense(r, c, nil), m: mat.NewDense(r, c, nil), v: mat.NewDense(r, c, nil)}
}

// accumulate adds x^T d to the gradient of a weight applied as x W.
func (p *param) accumulate(x, d *mat.Dense) {
	var g mat.Dense
	g.Mul(x.T(), d)
	p.g.Add(p.g, &g)
}

// accumulateBias adds the column sums of d to the gradient of a bias.
func (p *param) accumulateBias(d *mat.Dense) {
	r, c := d.Dims()
	for j := 0; j < c; j++ {
		s := 0.0
		for i := 0; i < r; i++ {
			s += d.At(i, j)
		}
		p.g.Set(0, j, p.g.At(0, j)+s)
	}
}

// adam applies one Adam step (step counts from 1) and clears the gradient.
func (p *param) adam(lr float64, step int) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	r, c := p.w.Dims()
	c1, c2 := 1-math.Pow(b1, float64(step)), 1-math.Pow(b2, float64(step))
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			g := p.g.At(i, j)
			m := b1*p.m.At(i, j) + (1-b1)*g
			v := b2*p.v.At(i, j) + (1-b2)*g*g
			p.m.Set(i, j, m)
			p.v.Set(i, j, v)
			p.w.Set(i, j, p.w.At(i, j)-lr*(m/c1)/(math.Sqrt(v/c2)+eps))
		}
	}
	p.g.Zero()
}
