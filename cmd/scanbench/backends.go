package main

import "github.com/mingru/scans/dispatch"

// compiledBackends lists every backend compiled into the command, eager
// first (dispatch.Backends: eager, CUDA with -tags cuda, Vulkan). Tests
// replace it.
var compiledBackends = dispatch.Backends
