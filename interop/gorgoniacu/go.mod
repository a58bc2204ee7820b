module github.com/mingru/scans/interop/gorgoniacu

go 1.26

require (
	github.com/mingru/scans v0.0.0
	gorgonia.org/cu v0.9.6
)

require (
	github.com/google/uuid v1.1.1 // indirect
	github.com/pkg/errors v0.9.1 // indirect
)

replace github.com/mingru/scans => ../..
