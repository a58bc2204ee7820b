// Command mingru trains a small stack of minGRU layers on a task where
// memory matters, with the recurrence of every layer run by package
// dispatch (on a GPU where one is found, else eager; MINGRU_SCAN chooses)
// and the projections on the host with gonum.
//
// The task, selective recall: each sequence holds values u_t drawn
// uniformly from (0, 1) and, at one random step in its first half, a
// marker; the model must output, after the last step, the value that the
// marker pointed at. Predicting the mean scores 1/12 (about 0.083) in mean
// squared error; a model that remembers the marked value scores near 0.
// A minGRU layer can: its gate opens on the marker and stays shut after.
//
//	go run ./examples/mingru                       # eager or the GPU found
//	MINGRU_SCAN=vulkan go run ./examples/mingru    # Vulkan, lavapipe included
//	go run ./examples/mingru -steps 600 -T 128
//
// It prints the loss as it falls and the time per step.
package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/mingru/scans/dispatch"
)

// config is one training run.
type config struct {
	steps, B, T, D, layers int
	lr                     float64
	seed                   uint64
	every                  int // print every this many steps (0: never)
}

func main() {
	var c config
	flag.IntVar(&c.steps, "steps", 300, "training steps")
	flag.IntVar(&c.B, "B", 32, "sequences a step")
	flag.IntVar(&c.T, "T", 64, "sequence length")
	flag.IntVar(&c.D, "D", 32, "channels of each layer")
	flag.IntVar(&c.layers, "layers", 2, "minGRU layers")
	flag.Float64Var(&c.lr, "lr", 0.01, "Adam's learning rate")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the weights and the data")
	flag.IntVar(&c.every, "every", 25, "print the loss every this many steps")
	flag.Parse()
	for _, st := range dispatch.Statuses() {
		fmt.Println("backend:", st)
	}
	if _, err := train(c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mingru:", err)
		os.Exit(1)
	}
}

// model is the stack and its readout y = h_{T-1} wo + bo of the last layer.
type model struct {
	layers []*layer
	wo, bo *param
}

func newModel(c config, rng *rand.Rand) *model {
	m := &model{}
	in := 2
	for i := 0; i < c.layers; i++ {
		m.layers = append(m.layers, newLayer(in, c.D, rng))
		in = c.D
	}
	m.wo, m.bo = newParam(c.D, 1, 1/float64(c.D), rng), newParam(1, 1, 0, rng)
	return m
}

func (m *model) params() []*param {
	ps := []*param{m.wo, m.bo}
	for _, l := range m.layers {
		ps = append(ps, l.params()...)
	}
	return ps
}

// batch draws B sequences of selective recall: inputs ((B*T) x 2: the
// value and the marker) and targets.
func batch(B, T int, rng *rand.Rand) (*mat.Dense, []float64) {
	x := mat.NewDense(B*T, 2, nil)
	y := make([]float64, B)
	for b := 0; b < B; b++ {
		p := rng.IntN(max(T/2, 1))
		for t := 0; t < T; t++ {
			u := rng.Float64()
			x.Set(b*T+t, 0, u)
			if t == p {
				x.Set(b*T+t, 1, 1)
				y[b] = u
			}
		}
	}
	return x, y
}

// step runs one forward and backward pass and returns the loss; the
// parameters' gradients are accumulated.
func (m *model) step(x *mat.Dense, y []float64, B, T int) (float64, error) {
	h := x
	for _, l := range m.layers {
		var err error
		if h, err = l.forward(h, B, T); err != nil {
			return 0, err
		}
	}
	D := m.layers[len(m.layers)-1].out
	last := mat.NewDense(B, D, nil)
	for b := 0; b < B; b++ {
		last.SetRow(b, h.RawRowView(b*T+T-1))
	}
	pred := affine(last, m.wo.w, m.bo.w)
	loss := 0.0
	dpred := mat.NewDense(B, 1, nil)
	for b := 0; b < B; b++ {
		e := pred.At(b, 0) - y[b]
		loss += e * e / float64(B)
		dpred.Set(b, 0, 2*e/float64(B))
	}
	m.wo.accumulate(last, dpred)
	m.bo.accumulateBias(dpred)
	var dlast mat.Dense
	dlast.Mul(dpred, m.wo.w.T())
	dh := mat.NewDense(B*T, D, nil)
	for b := 0; b < B; b++ {
		dh.SetRow(b*T+T-1, dlast.RawRowView(b))
	}
	for i := len(m.layers) - 1; i >= 0; i-- {
		var err error
		if dh, err = m.layers[i].backward(dh); err != nil {
			return 0, err
		}
	}
	return loss, nil
}

// train runs c and returns the loss of every step, printing progress to w
// every c.every steps.
func train(c config, w io.Writer) ([]float64, error) {
	rng := rand.New(rand.NewPCG(c.seed, c.seed^0x9e3779b97f4a7c15))
	m := newModel(c, rng)
	losses := make([]float64, 0, c.steps)
	var spent time.Duration
	for s := 1; s <= c.steps; s++ {
		x, y := batch(c.B, c.T, rng)
		start := time.Now()
		loss, err := m.step(x, y, c.B, c.T)
		if err != nil {
			return losses, fmt.Errorf("step %d: %w", s, err)
		}
		for _, p := range m.params() {
			p.adam(c.lr, s)
		}
		spent += time.Since(start)
		losses = append(losses, loss)
		if c.every > 0 && (s%c.every == 0 || s == c.steps) {
			fmt.Fprintf(w, "step %4d  loss %.5f (mean of the last %d)  %.2f ms a step\n",
				s, mean(losses[max(0, len(losses)-c.every):]), min(c.every, len(losses)),
				float64(spent.Microseconds())/1e3/float64(s))
		}
	}
	return losses, nil
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
