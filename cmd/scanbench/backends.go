package main

import (
	"github.com/mingru/scans"
	"github.com/mingru/scans/eager"
)

// compiledBackends lists every backend compiled into the command, eager
// first. Tests replace it.
//
// It is the one place that names the backends; with package dispatch it is
// dispatch.Backends.
var compiledBackends = func() []scans.Backend { return []scans.Backend{eager.New()} }
