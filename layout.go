package scans

import "time"

// LayoutTimer is what a GPU backend's layout sweep (vk.Backend.Sweep,
// cuda.Backend.Sweep) measures with: the sweep chooses the layouts, the
// timer the inputs and the timing method. Package bench implements it;
// scanbench --sweep runs the sweeps with it.
type LayoutTimer interface {
	// Dims returns the dimensions of op at one of SPEC's benchmark shapes
	// ("lab", "long-T", "large").
	Dims(shape string, op Op) (Dims, error)
	// Time returns the median device time of op on b at d in dt: its
	// forward, or its forward and backward together when backward is set.
	Time(b Backend, op Op, d Dims, dt DType, backward bool) (time.Duration, error)
}
