// Package shaders holds the GLSL compute kernels of the Vulkan backend and
// their SPIR-V, compiled by glslc and embedded in the binary, so a program
// that uses package vk needs no shader files at run time.
//
// Each kernel source (*.comp) is compiled once per element type, with
// -DDT_F32, -DDT_F16 or -DDT_BF16, into a module named after the source and
// the type, for example linear_scan_fwd_f16. Shared code lives in *.glsl
// includes: common.glsl (element loads and stores, 16-bit packing, push
// constants), f16.glsl (the exact f16 conversions), chunks.glsl (the
// chunked layout of the elementwise kernels), affine.glsl, givens.glsl and
// givens_sg.glsl (the block kernels). Sizes
// that select a kernel's shape (workgroup size, k, v, chunk count) are
// specialization constants, set when package vk builds a pipeline. Modules
// are SPIR-V 1.0 (Vulkan 1.0), except the subgroup Givens kernels
// (givens_scan_sg_*), which use subgroup shuffles and are SPIR-V 1.3
// (Vulkan 1.1); package vk runs them only on devices that support them.
//
// After editing a source, regenerate from the repository root:
//
//	go generate ./shaders
//
// which needs glslc on PATH (shaderc). The tests fail when an embedded module
// differs from what the installed glslc produces, or when a source changed
// since the last generation.
//
// Reading a module:
//
//	code, err := shaders.SPIRV("linear_scan_fwd_f32")
package shaders

//go:generate go run gen.go

import (
	"embed"
	"fmt"
)

//go:embed spv/*.spv
var spv embed.FS

// module is one compiled kernel: its name, its source file, the
// preprocessor macros it was compiled with and the options it adds to the
// common ones.
type module struct {
	Name    string
	Source  string
	Defines []string
	Flags   []string
}

// SPIRV returns the embedded SPIR-V of the named module.
func SPIRV(name string) ([]byte, error) {
	b, err := spv.ReadFile("spv/" + name + ".spv")
	if err != nil {
		return nil, fmt.Errorf("shaders: no module %q", name)
	}
	return b, nil
}

// Modules returns the names of every embedded module.
func Modules() []string {
	out := make([]string, len(modules))
	for i, m := range modules {
		out[i] = m.Name
	}
	return out
}
