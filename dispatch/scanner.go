package dispatch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/mingru/scans"
)

// Scanner runs scans under one Choice. Its methods are safe for concurrent
// use. Most programs use the package-level functions, which share one
// Scanner configured from MINGRU_SCAN.
type Scanner struct {
	// Typed gives the Scanner the typed method of each operation
	// (LinearScan, GivensScanBackward, ...), each run through Run.
	scans.Typed

	choice Choice
	eager  scans.Backend
	gpus   []scans.Backend // in order of preference under Auto

	warnMu sync.Mutex
	warned map[string]bool
	warn   func(string)
}

// Option configures a Scanner made by New.
type Option func(*Scanner)

// WithBackends replaces the backends a Scanner chooses among: ref is the
// reference (normally eager) and gpus are tried in order under Auto.
func WithBackends(ref scans.Backend, gpus ...scans.Backend) Option {
	return func(s *Scanner) { s.eager, s.gpus = ref, gpus }
}

// WithWarnings sends each fallback warning to fn instead of standard error.
// A warning is issued once per Scanner and cause.
func WithWarnings(fn func(msg string)) Option {
	return func(s *Scanner) { s.warn = fn }
}

// New returns a Scanner for choice over the process's backends (see
// Backends), or over those given with WithBackends.
func New(choice Choice, opts ...Option) (*Scanner, error) {
	if _, err := ParseChoice(string(choice)); err != nil {
		return nil, err
	}
	s := &Scanner{choice: choice, warned: map[string]bool{}}
	s.Typed = scans.Typed{Runner: s}
	s.warn = func(msg string) { fmt.Fprintln(stderr, msg) }
	all := Backends()
	s.eager, s.gpus = all[0], all[1:]
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

var stderr io.Writer = os.Stderr

// Choice is the policy the Scanner was made with.
func (s *Scanner) Choice() Choice { return s.choice }

var (
	defaultOnce    sync.Once
	defaultScanner *Scanner
	defaultErr     error
)

// Default is the process-wide Scanner configured from MINGRU_SCAN, made on
// first use. An invalid MINGRU_SCAN is returned as the error (and by every
// package-level scan function).
func Default() (*Scanner, error) {
	defaultOnce.Do(func() {
		c, err := ParseChoice(os.Getenv(EnvVar))
		if err != nil {
			defaultErr = err
			return
		}
		defaultScanner, defaultErr = New(c)
	})
	return defaultScanner, defaultErr
}

// warnOnce issues msg the first time key is seen.
func (s *Scanner) warnOnce(key, msg string) {
	s.warnMu.Lock()
	seen := s.warned[key]
	s.warned[key] = true
	s.warnMu.Unlock()
	if !seen {
		s.warn("mingru/scans: " + msg)
	}
}

// location is where a backend's tensors live.
func location(b scans.Backend) string {
	if b.Name() == string(Eager) {
		return "host"
	}
	return b.Name()
}

func (s *Scanner) byLocation(loc string) scans.Backend {
	if loc == "host" {
		return s.eager
	}
	for _, g := range s.gpus {
		if g.Name() == loc {
			return g
		}
	}
	return nil
}

var errNilCall = errors.New("dispatch: Run: nil call")

// location is where a call's tensors live: that of its first argument.
func callLocation(c *scans.Call) string {
	for _, t := range c.Args {
		if !scans.IsNil(t) {
			return t.Location()
		}
	}
	return "host"
}

// callOwner is the backend instance that holds the call's tensors (that
// of its first argument, where it is scans.Owned), or nil.
func callOwner(c *scans.Call) scans.Backend {
	for _, t := range c.Args {
		if !scans.IsNil(t) {
			if o, ok := t.(scans.Owned); ok {
				return o.Owner()
			}
			return nil
		}
	}
	return nil
}

// plan lists the backends to try, in order, for a call whose inputs live
// at loc. Under Auto the last is always the reference. A call on a GPU
// backend's tensors runs on the instance that holds them.
func (s *Scanner) plan(c *scans.Call, loc string) ([]scans.Backend, error) {
	owner := callOwner(c)
	switch s.choice {
	case Eager:
		return []scans.Backend{s.eager}, nil
	case CUDA, Triton, Vulkan:
		name := s.choice.backendName()
		b := s.byLocation(name)
		if owner != nil && owner.Name() == name {
			b = owner
		}
		if b == nil {
			return nil, &scans.UnavailableError{Backend: name, Reason: name + " backend not compiled into this program"}
		}
		if st := b.Status(); !st.Available {
			return nil, fmt.Errorf("dispatch: %s=%s: %w", EnvVar, s.choice, &scans.UnavailableError{Backend: name, Reason: st.Reason})
		}
		if err := b.Supports(c.Op, c.Dims, c.DType); err != nil {
			return nil, fmt.Errorf("dispatch: %s=%s: %w", EnvVar, s.choice, err)
		}
		return []scans.Backend{b}, nil
	}
	// Auto.
	var gpus []scans.Backend
	if loc != "host" {
		if owner != nil {
			gpus = []scans.Backend{owner}
		} else if b := s.byLocation(loc); b != nil {
			gpus = []scans.Backend{b}
		}
	} else {
		gpus = s.gpus
	}
	var out, skipped []string
	var plan []scans.Backend
	for _, b := range gpus {
		st := b.Status()
		switch {
		case !st.Available:
			skipped = append(skipped, st.Reason)
		case st.Software && loc == "host":
			skipped = append(skipped, fmt.Sprintf("%s: %s runs on the CPU", b.Name(), st.Device))
		default:
			if err := b.Supports(c.Op, c.Dims, c.DType); err != nil {
				s.warnOnce(b.Name()+"|fallback|"+err.Error(), err.Error()+"; running eager")
				continue
			}
			plan = append(plan, b)
			out = append(out, b.Name())
		}
	}
	if len(plan) == 0 && len(skipped) > 0 && len(skipped) == len(gpus) {
		s.warnOnce("no-gpu", "no GPU backend in use ("+strings.Join(skipped, "; ")+"); running eager")
	}
	return append(plan, s.eager), nil
}

// do runs c, which Run has checked, under the Scanner's policy, returning
// outputs where the inputs live.
func (s *Scanner) do(c *scans.Call) (out []scans.Tensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("dispatch: %s: internal error: %v", c.Op, r)
		}
	}()
	loc := callLocation(c)
	plan, err := s.plan(c, loc)
	if err != nil {
		return nil, err
	}
	for i, b := range plan {
		out, err = s.runOn(b, loc, c)
		if err == nil {
			for j, t := range out {
				if scans.IsNil(t) {
					out[j] = nil // an absent gradient is a nil interface
				}
			}
			return out, nil
		}
		last := i == len(plan)-1
		if s.choice != Auto || last {
			return nil, err
		}
		var ae *scans.ArgError
		if errors.As(err, &ae) {
			return nil, err
		}
		s.warnOnce(b.Name()+"|error|"+errorClass(err), fmt.Sprintf("%v; running %s", err, plan[i+1].Name()))
	}
	return nil, err
}

// errorClass keys warnings by the kind of failure, not by its details.
func errorClass(err error) string {
	var fb *scans.ScanFallback
	var ke *scans.KernelError
	var ue *scans.UnavailableError
	switch {
	case errors.As(err, &fb):
		return "fallback:" + fb.Reason
	case errors.As(err, &ke):
		return "kernel:" + fmt.Sprintf("%T", ke.Err)
	case errors.As(err, &ue):
		return "unavailable"
	}
	return "other"
}

// runOn moves c's inputs to b, runs c there, and moves the outputs back to
// loc (into c.Out when the caller gave outputs). Temporary copies are
// released whatever happens.
func (s *Scanner) runOn(b scans.Backend, loc string, c *scans.Call) ([]scans.Tensor, error) {
	bloc := location(b)
	home := callOwner(c) // where the results go back to, if on a GPU
	if home == nil {
		home = s.byLocation(loc)
	}
	if bloc == loc && (loc == "host" || home == b) {
		return b.Run(c)
	}
	if c.Out != nil && loc != "host" {
		return nil, fmt.Errorf("dispatch: %s: the call's tensors are on %s but it runs on %s, which cannot write the caller's %s outputs (Out): %w",
			c.Op, loc, b.Name(), loc, &scans.ScanFallback{Backend: loc, Op: c.Op, Reason: "ran elsewhere"})
	}
	var temps []scans.Tensor
	defer func() {
		for _, t := range temps {
			_ = b.Release(t)
		}
	}()
	in := make([]scans.Tensor, len(c.Args))
	for i, t := range c.Args {
		if scans.IsNil(t) || bloc == loc {
			in[i] = t
			continue
		}
		m, err := s.move(t, loc, b)
		if err != nil {
			return nil, err
		}
		temps = append(temps, m)
		in[i] = m
	}
	out, err := b.Run(c.WithArgs(in))
	if err != nil {
		return out, err
	}
	temps = append(temps, out...)
	if c.Out != nil {
		// Into the caller's host tensors.
		for i, t := range out {
			if scans.IsNil(t) {
				continue
			}
			h, err := s.move(t, bloc, s.eager)
			if err != nil {
				return nil, err
			}
			if err := c.Out[i].(*scans.Host).CopyFrom(h.(*scans.Host)); err != nil {
				return nil, err
			}
		}
		return append([]scans.Tensor(nil), c.Out...), nil
	}
	res := make([]scans.Tensor, len(out))
	for i, t := range out {
		if scans.IsNil(t) {
			continue
		}
		m, err := s.move(t, bloc, home)
		if err != nil {
			if home != nil {
				for _, r := range res[:i] {
					if !scans.IsNil(r) {
						_ = home.Release(r)
					}
				}
			}
			return nil, err
		}
		res[i] = m
	}
	return res, nil
}

// move copies t, which lives at from, to backend to.
func (s *Scanner) move(t scans.Tensor, from string, to scans.Backend) (scans.Tensor, error) {
	if to == nil {
		return nil, fmt.Errorf("dispatch: no backend to move a tensor to %q", from)
	}
	h, ok := t.(*scans.Host)
	if !ok {
		src := s.byLocation(from)
		if o, ok := t.(scans.Owned); ok {
			src = o.Owner()
		}
		if src == nil {
			return nil, fmt.Errorf("dispatch: no backend holds tensors on %q", from)
		}
		var err error
		if h, err = src.Download(t); err != nil {
			return nil, err
		}
	}
	if location(to) == "host" {
		return h, nil
	}
	return to.Upload(h)
}
