//go:build cuda

package cuda

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
)

// fakeTimer times nothing: it checks that a layout was set for each
// timing and returns a made-up time, or an error for the call numbered
// failAt.
type fakeTimer struct {
	t      *testing.T
	b      *Backend
	calls  int
	failAt int
}

func (f *fakeTimer) Dims(shape string, op scans.Op) (scans.Dims, error) {
	return (&bench.LayoutTimer{}).Dims(shape, op)
}

func (f *fakeTimer) Time(b scans.Backend, op scans.Op, d scans.Dims, dt scans.DType, bwd bool) (time.Duration, error) {
	f.calls++
	if b != scans.Backend(f.b) || f.b.occ.layout == nil || f.b.poison {
		f.t.Errorf("timing %d: %s %v %s on %v with layout %v, poison %v; want the swept backend, a layout set, no poison",
			f.calls, op, d, dt, b, f.b.occ.layout, f.b.poison)
	}
	if f.calls == f.failAt {
		return 0, errors.New("made-up failure")
	}
	return time.Duration(f.calls) * time.Microsecond, nil
}

// TestSweep runs every part of the layout sweep with a timer that runs
// nothing: each part writes its header and rows, each under a layout of
// its own, a failed timing is a comment line and an error while the
// sweep goes on, and the backend's rules and poisoning are as before
// afterwards.
func TestSweep(t *testing.T) {
	b := gpu(t)
	f := &fakeTimer{t: t, b: b, failAt: 5}
	var w bytes.Buffer
	err := b.Sweep(&w, nil, f)
	if err == nil || !strings.Contains(err.Error(), "made-up failure") {
		t.Errorf("Sweep returned %v, want the failed timing", err)
	}
	rows, failed, parts := 0, 0, 0
	width := 0
	for _, l := range strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "# ") && strings.Contains(l, "made-up failure"):
			failed++
		case strings.HasPrefix(l, "# "):
			parts++
			width = 0
		case width == 0:
			width = len(strings.Split(l, "\t")) // the header
		default:
			if n := len(strings.Split(l, "\t")); n != width {
				t.Errorf("row %q: %d columns, want the header's %d", l, n, width)
			}
			rows++
		}
	}
	if parts != len(SweepParts) || failed != 1 || rows+failed != f.calls {
		t.Errorf("%d parts, %d failed timings, %d rows for %d timings; want %d parts and one failure",
			parts, failed, rows, f.calls, len(SweepParts))
	}
	if b.occ.layout != nil || !b.poison {
		t.Errorf("after the sweep: layout %v, poison %v; want the rules and poisoning back", b.occ.layout, b.poison)
	}
	if err := b.Sweep(&w, []string{"sideways"}, f); err == nil || !strings.Contains(err.Error(), `"sideways"`) {
		t.Errorf("an unknown part: %v, want an error naming it", err)
	}
}
