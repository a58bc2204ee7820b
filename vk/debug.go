//go:build cgo

package vk

import (
	"fmt"
	"sync"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// Messages from the validation layer (MINGRU_VK_VALIDATION=1). The binding
// supports one debug-report callback per process, so they are collected
// process-wide.
var (
	debugMu   sync.Mutex
	debugMsgs []string
)

func debugReport(flags vk.DebugReportFlags, objectType vk.DebugReportObjectType, object uint64, location uint,
	messageCode int32, pLayerPrefix string, pMessage string, pUserData unsafe.Pointer) vk.Bool32 {
	kind := "warning"
	switch {
	case flags&vk.DebugReportFlags(vk.DebugReportErrorBit) != 0:
		kind = "error"
	case flags&vk.DebugReportFlags(vk.DebugReportPerformanceWarningBit) != 0:
		kind = "performance warning"
	}
	debugMu.Lock()
	debugMsgs = append(debugMsgs, fmt.Sprintf("%s %s: %s", pLayerPrefix, kind, pMessage))
	debugMu.Unlock()
	return vk.False
}

// validationMessages returns and clears the messages recorded so far.
func validationMessages() []string {
	debugMu.Lock()
	defer debugMu.Unlock()
	m := debugMsgs
	debugMsgs = nil
	return m
}

// vkDebugMessage sends an error message through the instance's debug-report
// callbacks (tests use it to prove the recorder is wired).
func vkDebugMessage(d *device, msg string) {
	vk.DebugReportMessage(d.instance, vk.DebugReportFlags(vk.DebugReportErrorBit), vk.DebugReportObjectTypeUnknown, 0, 0, 0, "test\x00", msg+"\x00")
}
