//go:build cgo

package vk

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
)

// fakeTimer times nothing: it records the layout each timing ran under
// and returns a made-up time, or an error for the call numbered failAt.
type fakeTimer struct {
	t      *testing.T
	b      *Backend
	calls  int
	failAt int
	tiled  []bool // whether a tiled layout was set, per call
}

func (f *fakeTimer) Dims(shape string, op scans.Op) (scans.Dims, error) {
	return (&bench.LayoutTimer{}).Dims(shape, op)
}

func (f *fakeTimer) Time(b scans.Backend, op scans.Op, d scans.Dims, dt scans.DType, bwd bool) (time.Duration, error) {
	if b != scans.Backend(f.b) {
		f.t.Errorf("timed on %v, want the swept backend", b)
	}
	if err := f.b.Supports(op, d, dt); err != nil {
		f.t.Errorf("%s %v %s: %v", op, d, dt, err)
	}
	f.calls++
	f.tiled = append(f.tiled, f.b.cfg.tiledLayout != nil)
	if f.calls == f.failAt {
		return 0, errors.New("made-up failure")
	}
	return time.Duration(f.calls) * time.Microsecond, nil
}

// TestSweep runs every part of the layout sweep with a timer that runs
// nothing: each part writes rows, each tiled grid marks the rule's row
// (timed under the rule, every other under a set layout), a failed
// timing is a comment line and an error while the sweep goes on, and the
// backend's layouts are as before afterwards.
func TestSweep(t *testing.T) {
	b := testBackend(t)
	before := b.cfg
	f := &fakeTimer{t: t, b: b, failAt: 3}
	var w bytes.Buffer
	err := b.Sweep(&w, nil, f)
	if err == nil || !strings.Contains(err.Error(), "made-up failure") {
		t.Errorf("Sweep returned %v, want the failed timing", err)
	}
	lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "# ") || lines[1] != SweepHeader {
		t.Fatalf("output starts %q, want the device and the header", lines[:min(3, len(lines))])
	}
	rows, comments := 0, 0
	parts := map[string]bool{}
	// Each timing wrote one line, in order: line j after the header is
	// timing j+1.
	for j, l := range lines[2:] {
		if strings.HasPrefix(l, "# ") {
			comments++
			continue
		}
		cols := strings.Split(l, "\t")
		if len(cols) != 10 {
			t.Fatalf("row %q: %d columns, want 10", l, len(cols))
		}
		rows++
		parts[cols[0]+" "+cols[4]] = true
		if cols[4] == "tiled" && j < len(f.tiled) && (cols[8] == "true") == f.tiled[j] {
			t.Errorf("row %q was timed with a tiled layout set: %v", l, f.tiled[j])
		}
	}
	if comments != 1 {
		t.Errorf("%d comment lines after the header, want the one failed timing", comments)
	}
	if rows+comments != f.calls {
		t.Errorf("%d rows and %d comments for %d timings", rows, comments, f.calls)
	}
	for _, want := range []string{"long-T tiled", "large tiled", "lab rows", "long-T columns", "long-T rows"} {
		if !parts[want] {
			t.Errorf("no %q rows", want)
		}
	}
	if !reflect.DeepEqual(b.cfg, before) {
		t.Errorf("the backend's layouts changed: %+v, want %+v", b.cfg, before)
	}
	if err := b.Sweep(&w, []string{"long", "sideways"}, f); err == nil || !strings.Contains(err.Error(), `"sideways"`) {
		t.Errorf("an unknown part: %v, want an error naming it", err)
	}
}
