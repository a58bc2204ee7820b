//go:build cgo

package vk

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"time"

	vk "github.com/vulkan-go/vulkan"

	"github.com/mingru/scans/shaders"
)

// pipeKey names one specialization of a module.
type pipeKey struct {
	module string
	spec   [numSpec]uint32
}

// pipeline returns the compute pipeline of a module specialized with spec,
// building and caching it on first use.
func (d *device) pipeline(module string, spec [numSpec]uint32) (vk.Pipeline, error) {
	d.pipeMu.Lock()
	defer d.pipeMu.Unlock()
	key := pipeKey{module, spec}
	if p, ok := d.pipes[key]; ok {
		return p, nil
	}
	sm, ok := d.modules[module]
	if !ok {
		code, err := shaders.SPIRV(module)
		if err != nil {
			return nil, fmt.Errorf("vk: %w", err)
		}
		words := make([]uint32, len(code)/4)
		for i := range words {
			words[i] = binary.LittleEndian.Uint32(code[4*i:])
		}
		info := &vk.ShaderModuleCreateInfo{
			SType:    vk.StructureTypeShaderModuleCreateInfo,
			CodeSize: uint(len(code)),
			PCode:    words,
		}
		r := vk.CreateShaderModule(d.dev, info, nil, &sm)
		runtime.KeepAlive(words) // the binding passes the code by pointer
		if err := check(r, "create shader module "+module); err != nil {
			return nil, err
		}
		d.modules[module] = sm
	}
	start := time.Now()
	var flags uint32
	if d.pipeStats {
		flags = pipelineCaptureStatistics
	}
	p, r := shimCreatePipeline(d.instance, d.dev, sm, d.layout, spec[:], flags, d.stageFlags(module))
	if err := check(r, fmt.Sprintf("create pipeline %s %v", module, spec)); err != nil {
		return nil, err
	}
	d.logPipeline(module, spec, time.Since(start), p)
	d.pipes[key] = p
	return p, nil
}

// logPipeline appends one line for a pipeline just built to the file named
// by MINGRU_VK_PIPELINE_LOG: module, specialization constants, build time
// and, where the driver gives them (VK_KHR_pipeline_executable_properties),
// its statistics of the compiled code (registers, spills, instruction
// counts: whatever it reports, under its own names). A diagnostic: failing
// to write it is ignored.
func (d *device) logPipeline(module string, spec [numSpec]uint32, took time.Duration, p vk.Pipeline) {
	if d.pipeLog == "" {
		return
	}
	line := fmt.Sprintf("%s\t%v\t%.3f ms", module, spec, float64(took.Microseconds())/1e3)
	if d.pipeStats {
		line += "\t" + shimPipelineStats(d.instance, d.dev, p)
	}
	f, err := os.OpenFile(d.pipeLog, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintln(f, line)
	f.Close()
}
