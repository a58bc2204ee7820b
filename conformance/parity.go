package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/eager"
	"github.com/mingru/scans/reference"
)

// Row is the result of one conformance check.
type Row struct {
	Backend   string          `json:"backend"`
	Reference string          `json:"reference"` // the backend the outputs were compared with
	Case      string          `json:"case"`      // Case.Name
	Op        scans.Op        `json:"op"`
	Direction scans.Direction `json:"direction"`
	DType     string          `json:"dtype"`
	Dims      scans.Dims      `json:"dims"`
	T         int             `json:"T"`
	Regime    bench.Regime    `json:"regime"`
	Init      bool            `json:"init"` // the initial state was given
	// MaxAbsErr and MaxRelErr are the largest |got - want| and
	// |got - want| / |want| over every output element (relative errors
	// only where want != 0).
	MaxAbsErr float64 `json:"max_abs_err"`
	MaxRelErr float64 `json:"max_rel_err"`
	// Worst names the output whose largest error is closest to (or
	// furthest past) its gate; Ratio is that error over the gate (<= 1
	// passes), and Atol, Rtol are that output's gate.
	Worst string  `json:"worst"`
	Ratio float64 `json:"ratio"`
	Atol  float64 `json:"atol"`
	Rtol  float64 `json:"rtol"`
	Pass  bool    `json:"pass"`
	// FallbackExpected is whether the backend must decline the case with
	// *scans.ScanFallback; FallbackGot whether it did.
	FallbackExpected bool   `json:"fallback_expected"`
	FallbackGot      bool   `json:"fallback_got"`
	Err              string `json:"error,omitempty"`
	Seed             uint64 `json:"seed"` // reruns the row with CheckCase
	Millis           int64  `json:"ms"`   // wall time of the row
}

// Parity runs cases on b and compares every output with ref (the eager
// backend for a GPU backend; Reference for eager itself). Long-memory rows
// are compared with Reference whatever ref is; a nil ref means Reference
// for every row. Inputs are fresh random draws from a time-based seed
// recorded in each row. When progress is not nil, Parity writes a line
// there for each failing row and a summary every few seconds.
func Parity(b, ref scans.Backend, cases []Case, progress io.Writer) []Row {
	return ParitySeed(b, ref, cases, uint64(time.Now().UnixNano()), progress)
}

// ParitySeed is Parity with a chosen seed.
func ParitySeed(b, ref scans.Backend, cases []Case, seed uint64, progress io.Writer) []Row {
	rows := make([]Row, 0, len(cases))
	start, last := time.Now(), time.Now()
	failed := 0
	refName := reference.Name
	if ref != nil {
		refName = ref.Name()
	}
	for i, c := range cases {
		r := CheckCase(b, ref, c, seed)
		rows = append(rows, r)
		if !r.Pass {
			failed++
		}
		if progress == nil {
			continue
		}
		if !r.Pass {
			fmt.Fprintf(progress, "FAIL %s %s\n", r.Backend, r.Summary())
		}
		if time.Since(last) > 3*time.Second || i == len(cases)-1 {
			last = time.Now()
			fmt.Fprintf(progress, "parity %s vs %s: %d/%d rows, %d failing, %s\n",
				b.Name(), refName, i+1, len(cases), failed, time.Since(start).Round(time.Millisecond))
		}
	}
	return rows
}

// Summary is the row on one line: its case, its verdict and its worst
// error, or its error text.
func (r Row) Summary() string {
	verdict := "ok"
	if !r.Pass {
		verdict = "FAIL"
	}
	s := fmt.Sprintf("%s: %s", r.Case, verdict)
	switch {
	case r.FallbackExpected || r.FallbackGot:
		s += fmt.Sprintf(" (fallback expected=%v got=%v)", r.FallbackExpected, r.FallbackGot)
	case r.Worst != "":
		s += fmt.Sprintf(" (worst %s: max abs %.3g, max rel %.3g, %.3g of gate atol=%.3g rtol=%.3g)",
			r.Worst, r.MaxAbsErr, r.MaxRelErr, r.Ratio, r.Atol, r.Rtol)
	}
	if r.Err != "" {
		s += ": " + r.Err
	}
	return s
}

// IsHost reports whether b computes on the host and so serves every shape
// (eager and Reference): such a backend is never expected to fall back.
func IsHost(b scans.Backend) bool {
	n := b.Name()
	return n == "eager" || n == reference.Name
}

// CheckCase runs one case on b and on its reference (see Parity) with
// inputs drawn from seed and the case's name, and compares the outputs.
// It never panics: a panic in a backend is recorded as the row's error.
func CheckCase(b, ref scans.Backend, c Case, seed uint64) (row Row) {
	start := time.Now()
	row = Row{
		Backend: b.Name(), Case: c.Name(), Op: c.Op, Direction: c.Dir,
		DType: c.DType.String(), Dims: c.Dims, T: c.Dims.T, Regime: c.Regime,
		Init: c.Init && bench.HasInit(c.Op), Seed: seed,
		FallbackExpected: c.OutOfEnvelope && !IsHost(b),
	}
	if ref == nil || c.Regime == bench.LongMemory {
		ref = reference.New()
	}
	row.Reference = ref.Name()
	defer func() {
		if p := recover(); p != nil {
			row.Pass = false
			row.Err = fmt.Sprintf("panic: %v", p)
		}
		row.Millis = time.Since(start).Milliseconds()
	}()
	fail := func(format string, args ...any) Row {
		row.Pass = false
		msg := fmt.Sprintf(format, args...)
		if row.Err != "" {
			row.Err += "; "
		}
		row.Err += msg
		return row
	}

	rng := rand.New(rand.NewPCG(seed, nameHash(row.Case)))
	in, err := bench.InputsInit(c.Op, c.Dims, c.DType, c.Regime, c.Init, rng)
	if err != nil {
		return fail("inputs: %v", err)
	}

	// The reference's outputs. For backward the forward output h is the
	// reference's, shared by both sides so that only the backward differs.
	var h *scans.Host
	if c.Dir == scans.Backward {
		out, err := bench.Run(ref, c.Op, scans.Forward, in, nil)
		if err != nil {
			return fail("reference %s forward: %v", ref.Name(), err)
		}
		h = out[0]
	}
	want, err := bench.Run(ref, c.Op, c.Dir, in, h)
	if err != nil {
		return fail("reference %s: %v", ref.Name(), err)
	}

	var fb *scans.ScanFallback
	supErr := b.Supports(c.Op, in.Dims, c.DType)
	got, runErr := bench.Run(b, c.Op, c.Dir, in, h)
	row.FallbackGot = errors.As(runErr, &fb)
	if row.FallbackExpected {
		switch {
		case !errors.As(supErr, &fb):
			return fail("Supports returned %v, want a *scans.ScanFallback", supErr)
		case runErr == nil:
			return fail("computed a shape outside the envelope instead of returning *scans.ScanFallback")
		case !row.FallbackGot:
			return fail("returned %v, want a *scans.ScanFallback", runErr)
		}
		row.Pass = true
		return row
	}
	if supErr != nil {
		fail("Supports: %v", supErr)
	}
	if runErr != nil {
		return fail("%v", runErr)
	}

	names := []string{bench.OutputName(c.Op)}
	if c.Dir == scans.Backward {
		names = bench.GradNames(c.Op)
	}
	row.Pass = row.Err == ""
	row.Ratio = -1
	for i, w := range want {
		g := got[i]
		switch {
		case w == nil && g == nil:
			continue
		case w == nil:
			return fail("%s: got a tensor %v, want nil (no initial state was given)", names[i], g)
		case g == nil:
			return fail("%s: got nil, want %v", names[i], w)
		case g.DType() != w.DType() || !slices.Equal(g.Shape(), w.Shape()):
			return fail("%s: got %v, want %v", names[i], g, w)
		}
		wv, gv := w.Float64s(), g.Float64s()
		atol, rtol := Gate(c.Op, c.Dir, c.DType)
		if c.Regime == bench.LongMemory {
			atol, rtol = LongMemoryAtol(c.Dims.T, wv), 0
		}
		d := Compare(gv, wv, atol, rtol)
		row.MaxAbsErr = math.Max(row.MaxAbsErr, d.MaxAbs)
		row.MaxRelErr = math.Max(row.MaxRelErr, d.MaxRel)
		if d.Ratio > row.Ratio || math.IsNaN(d.Ratio) {
			row.Worst, row.Ratio, row.Atol, row.Rtol = names[i], d.Ratio, atol, rtol
		}
		if !d.Pass() {
			fail("%s: %d of %d elements outside the gate, first at %s: got %g, want %g",
				names[i], d.Bad, d.N, Index(w.Shape(), d.First), d.Got, d.Want)
		}
	}
	if row.Ratio < 0 {
		row.Ratio = 0
	}
	return row
}

// Index formats a flat row-major index as a multi-index, e.g. "[1 0 7]".
func Index(shape []int, flat int) string {
	idx := make([]int, len(shape))
	for i := len(shape) - 1; i >= 0; i-- {
		idx[i] = flat % shape[i]
		flat /= shape[i]
	}
	return fmt.Sprint(idx)
}

func nameHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// MarshalJSON writes the row with a non-finite Ratio (a NaN or Inf where
// the reference is finite) as the string "+Inf" or "NaN", which JSON
// numbers cannot hold.
func (r Row) MarshalJSON() ([]byte, error) {
	type plain Row
	var ratio any = r.Ratio
	if math.IsInf(r.Ratio, 0) || math.IsNaN(r.Ratio) {
		ratio = strconv.FormatFloat(r.Ratio, 'g', -1, 64)
	}
	return json.Marshal(struct {
		plain
		Ratio any `json:"ratio"`
	}{plain(r), ratio})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Row) UnmarshalJSON(b []byte) error {
	type plain Row
	var v struct {
		plain
		Ratio json.RawMessage `json:"ratio"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = Row(v.plain)
	if len(v.Ratio) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(v.Ratio, &s) == nil {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("bench: row ratio %q: %w", s, err)
		}
		r.Ratio = f
		return nil
	}
	return json.Unmarshal(v.Ratio, &r.Ratio)
}

// ReferenceFor returns the backend b is compared with: eager for a GPU
// backend (the contract's reference, f32 accumulation on the same inputs),
// and the float64 Reference for a host backend (eager itself).
func ReferenceFor(b scans.Backend) scans.Backend {
	if IsHost(b) {
		return reference.New()
	}
	return eager.New()
}
