package bench

import (
	"math/rand/v2"
	"time"

	"github.com/mingru/scans"
)

// LayoutTimer implements scans.LayoutTimer with MeasureInputs: each
// timing's inputs are drawn (Typical regime, initial state given) from
// Rand, and kept while the operation, dimensions and type stay the same,
// so that the layouts of one grid time the same data (and large inputs
// are drawn once).
type LayoutTimer struct {
	Timing Timing
	Rand   *rand.Rand // nil: seeded from the clock

	last *InputSet
}

// Dims implements scans.LayoutTimer: the shape's dimensions for op,
// normalized (NormalizeDims).
func (l *LayoutTimer) Dims(shape string, op scans.Op) (scans.Dims, error) {
	s, err := ShapeByName(shape)
	if err != nil {
		return scans.Dims{}, err
	}
	return NormalizeDims(op, s.Dims(op))
}

// Time implements scans.LayoutTimer: the median of MeasureInputs (cold
// where b can flush its cache).
func (l *LayoutTimer) Time(b scans.Backend, op scans.Op, d scans.Dims, dt scans.DType, backward bool) (time.Duration, error) {
	d, err := NormalizeDims(op, d)
	if err != nil {
		return 0, err
	}
	if l.last == nil || l.last.Op != op || l.last.Dims != d || l.last.DType != dt {
		l.last = nil
		l.Rand = orClock(l.Rand)
		in, err := InputsInit(op, d, dt, Typical, true, l.Rand)
		if err != nil {
			return 0, err
		}
		l.last = in
	}
	mode := ModeForward
	if backward {
		mode = ModeBackward
	}
	m, err := MeasureInputs(b, l.last, mode, l.Timing)
	if err != nil {
		return 0, err
	}
	return time.Duration(m.Median * 1e9), nil
}

var _ scans.LayoutTimer = (*LayoutTimer)(nil)
