package bench

import (
	"math/rand/v2"
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/eager"
)

// BenchmarkLab times every operation at the lab shape on eager, forward
// and forward plus backward, in f32 (go test -bench Lab ./bench). The
// reported MB/s is the traffic of Traffic.
func BenchmarkLab(b *testing.B) {
	benchShape(b, eager.New(), Shapes[0])
}

func benchShape(b *testing.B, be scans.Backend, s Shape) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, op := range scans.Ops {
		for _, mode := range []Mode{ModeForward, ModeBackward} {
			b.Run(string(op)+"/"+string(mode), func(b *testing.B) {
				d, _ := NormalizeDims(op, s.Dims(op))
				in, err := InputsInit(op, d, scans.F32, Typical, true, rng)
				if err != nil {
					b.Fatal(err)
				}
				bytes, err := Traffic(op, d, scans.F32, mode)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(bytes)
				args := in.Tensors()
				for b.Loop() {
					out, err := Forward(be, op, args)
					if err != nil {
						b.Fatal(err)
					}
					if mode == ModeBackward {
						if _, err := Backward(be, op, args, out, in.Grad); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
