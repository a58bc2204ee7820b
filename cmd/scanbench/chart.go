package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
)

// backendStyle gives each backend one colour and glyph in every chart,
// from the Okabe-Ito palette, which colour-blind readers can tell apart.
var backendStyle = map[string]struct {
	c     color.RGBA
	shape draw.GlyphDrawer
}{
	"eager":  {color.RGBA{0x00, 0x00, 0x00, 0xff}, draw.CircleGlyph{}},
	"cuda":   {color.RGBA{0x00, 0x72, 0xb2, 0xff}, draw.BoxGlyph{}},
	"vulkan": {color.RGBA{0xe6, 0x9f, 0x00, 0xff}, draw.PyramidGlyph{}},
}

func styleOf(backend string) (color.RGBA, draw.GlyphDrawer) {
	if s, ok := backendStyle[backend]; ok {
		return s.c, s.shape
	}
	return color.RGBA{0x00, 0x9e, 0x73, 0xff}, draw.RingGlyph{}
}

// chart draws the median time of every row of the first element type, one
// panel per mode (forward, forward+backward), one column per operation
// and shape, one glyph per backend on a log scale; each GPU point is
// labelled with its speedup over eager, and a row not run is a cross at
// the foot of its column. The title names the devices, date and commit.
func (r benchReport) chart(file string) error {
	dt := ""
	for _, m := range r.Rows {
		dt = m.DType
		break
	}
	var cats []string
	catIdx := map[string]int{}
	var backends []string
	seen := map[string]bool{}
	for _, m := range r.Rows {
		if m.DType != dt {
			continue
		}
		cat := shortOp(m.Op) + "\n" + m.Shape
		if _, ok := catIdx[cat]; !ok {
			catIdx[cat] = len(cats)
			cats = append(cats, cat)
		}
		if !seen[m.Backend] {
			seen[m.Backend] = true
			backends = append(backends, m.Backend)
		}
	}
	if len(cats) == 0 {
		return fmt.Errorf("chart: no rows")
	}
	lo, hi := math.Inf(1), 0.0
	for _, m := range r.Rows {
		if m.DType == dt && m.Skipped == "" && m.Median > 0 {
			lo, hi = min(lo, m.Median), max(hi, m.Median)
		}
	}
	if hi == 0 {
		lo, hi = 1e-6, 1e-3
	}
	// Decades around the data, a little room above for the labels.
	ymin := math.Pow(10, math.Floor(math.Log10(lo*1e6)))
	ymax := math.Pow(10, math.Ceil(math.Log10(hi*1e6*3)))

	var panels [][]*plot.Plot
	for _, mode := range []bench.Mode{bench.ModeForward, bench.ModeBackward} {
		p := plot.New()
		p.Title.Text = string(mode)
		p.Y.Label.Text = "median time (log scale)"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = timeTicks{}
		p.Y.Min, p.Y.Max = ymin, ymax
		p.X.Min, p.X.Max = -0.6, float64(len(cats))-0.4
		p.Add(plotter.NewGrid())
		p.NominalX(cats...)
		p.Legend.Top = true
		p.Legend.Left = true
		p.BackgroundColor = color.White
		for bi, be := range backends {
			off := 0.25 * (float64(bi) - float64(len(backends)-1)/2)
			var pts, skipped plotter.XYs
			var labels plotter.XYLabels
			for _, m := range r.Rows {
				if m.DType != dt || m.Mode != mode || m.Backend != be {
					continue
				}
				x := float64(catIdx[shortOp(m.Op)+"\n"+m.Shape]) + off
				if m.Skipped != "" || m.Median <= 0 {
					skipped = append(skipped, plotter.XY{X: x, Y: ymin * 1.15})
					continue
				}
				y := m.Median * 1e6
				pts = append(pts, plotter.XY{X: x, Y: y})
				if m.Speedup > 0 && be != "eager" {
					// Alternate backends label above and below their
					// points, so that neighbours' labels do not meet.
					ly := y * 1.35
					if bi%2 == 1 {
						ly = y / 1.6
					}
					labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: ly})
					labels.Labels = append(labels.Labels, speedupLabel(m.Speedup))
				}
			}
			c, shape := styleOf(be)
			if len(pts) > 0 {
				s, err := plotter.NewScatter(pts)
				if err != nil {
					return fmt.Errorf("chart: %w", err)
				}
				s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(3.5), Shape: shape}
				p.Add(s)
				p.Legend.Add(be, s)
			}
			if len(labels.XYs) > 0 {
				l, err := plotter.NewLabels(labels)
				if err != nil {
					return fmt.Errorf("chart: %w", err)
				}
				for i := range l.TextStyle {
					l.TextStyle[i].Color = c
					l.TextStyle[i].Font.Size = vg.Points(7)
					l.TextStyle[i].XAlign = draw.XCenter
				}
				p.Add(l)
			}
			if len(skipped) > 0 {
				s, err := plotter.NewScatter(skipped)
				if err != nil {
					return fmt.Errorf("chart: %w", err)
				}
				s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: draw.CrossGlyph{}}
				p.Add(s)
				p.Legend.Add(be+": not run", s)
			}
		}
		panels = append(panels, []*plot.Plot{p})
	}

	width := vg.Length(max(9, 0.9*float64(len(cats)))) * vg.Inch
	height := 9 * vg.Inch
	img := vgimg.New(width, height)
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	titleH := vg.Points(54)
	top := draw.Crop(dc, 0, 0, 0, -titleH)
	head := draw.Crop(dc, 0, 0, height-titleH, 0)
	ts := draw.TextStyle{Color: color.Black, Font: plot.DefaultFont, XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
	lines := []struct {
		size vg.Length
		text string
	}{
		{12, "Scan times, " + dt + cacheNote(r.Rows) + ": " + r.devices()},
		{9, fmt.Sprintf("commit %s, %s; labels: speedup over eager", shortCommit(r.Machine.Commit), r.Machine.Date)},
		{9, "linear = linear_scan, matrix = matrix_scan, affine = matrix_affine_scan, log = parallel_scan_log, givens = givens_scan"},
	}
	y := head.Max.Y - vg.Points(10)
	for _, l := range lines {
		ts.Font.Size = vg.Points(float64(l.size))
		head.FillText(ts, vg.Point{X: width / 2, Y: y}, l.text)
		y -= vg.Points(float64(l.size) + 5)
	}
	canvases := plot.Align(panels, draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Points(12), PadX: vg.Points(6), PadTop: vg.Points(4), PadBottom: vg.Points(4)}, top)
	for i := range panels {
		panels[i][0].Draw(canvases[i][0])
	}
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("chart: %w", err)
	}
	return f.Close()
}

// shortOp is an operation's name on the chart's axis.
func shortOp(op scans.Op) string {
	switch op {
	case scans.OpLinearScan:
		return "linear"
	case scans.OpMatrixScan:
		return "matrix"
	case scans.OpMatrixAffineScan:
		return "affine"
	case scans.OpParallelScanLog:
		return "log"
	case scans.OpGivensScan:
		return "givens"
	case scans.OpMingruScan:
		return "mingru"
	}
	return string(op)
}

func speedupLabel(s float64) string {
	switch {
	case s >= 10:
		return fmt.Sprintf("%.0fx", s)
	case s >= 1:
		return fmt.Sprintf("%.1fx", s)
	}
	return fmt.Sprintf("%.2gx", s)
}

// timeTicks marks each decade of a time axis in microseconds with its
// value in µs, ms or s.
type timeTicks struct{}

func (timeTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for v := math.Pow(10, math.Floor(math.Log10(lo))); v <= hi*1.0001; v *= 10 {
		if v < lo*0.9999 {
			continue
		}
		ts = append(ts, plot.Tick{Value: v, Label: decadeLabel(v)})
		for m := 2.0; m < 10; m++ {
			if v*m <= hi {
				ts = append(ts, plot.Tick{Value: v * m})
			}
		}
	}
	return ts
}

// cacheNote says how the GPU rows were timed: cold where each run
// followed a cache flush, else warm (runs before scanbench flushed).
func cacheNote(rows []bench.Measurement) string {
	gpu := false
	for _, m := range rows {
		if m.Cache == "cold" {
			return " (GPU rows cold cache)"
		}
		gpu = gpu || m.Backend != "eager"
	}
	if gpu {
		return " (GPU rows warm cache)"
	}
	return ""
}

// devices names each available backend's device.
func (r benchReport) devices() string {
	var parts []string
	for _, st := range r.Machine.Backends {
		if !st.Available {
			continue
		}
		d := st.Device
		if st.Backend == "eager" {
			d = fmt.Sprintf("%d CPUs", r.Machine.CPUs)
		}
		parts = append(parts, st.Backend+" on "+d)
	}
	return strings.Join(parts, ", ")
}

func shortCommit(c string) string {
	if len(c) >= 40 {
		return c[:12] + c[40:]
	}
	return c
}

// decadeLabel writes a power of ten of microseconds in the unit it is a
// whole number of (ns, µs, ms or s).
func decadeLabel(us float64) string {
	switch {
	case us >= 1e6:
		return fmt.Sprintf("%.0f s", us/1e6)
	case us >= 1e3:
		return fmt.Sprintf("%.0f ms", us/1e3)
	case us >= 1:
		return fmt.Sprintf("%.0f µs", us)
	}
	return fmt.Sprintf("%.0f ns", us*1e3)
}
