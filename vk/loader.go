//go:build cgo

package vk

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

static void* vkscan_dlopen(const char* name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }
static const char* vkscan_dlerror(void) { return dlerror(); }
static void* vkscan_dlsym(void* h, const char* name) { return dlsym(h, name); }
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

var (
	loaderMu    sync.Mutex
	loaderReady bool
)

// loadLoader opens the Vulkan loader (libvulkan.so.1, which the runtime
// package libvulkan1 installs; the binding's default, libvulkan.so, exists
// only with the development package) and hands its vkGetInstanceProcAddr
// to the binding. The binding's function table is process-wide, so it is
// filled once; every backend still dlopens its own name, so a backend
// configured with a missing library reports it.
func loadLoader(name string) error {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	loaderMu.Lock()
	defer loaderMu.Unlock()
	h := C.vkscan_dlopen(cname)
	if h == nil {
		msg := "unknown error"
		if e := C.vkscan_dlerror(); e != nil {
			msg = C.GoString(e)
		}
		return fmt.Errorf("%s not found (%s)", name, msg)
	}
	if loaderReady {
		return nil
	}
	csym := C.CString("vkGetInstanceProcAddr")
	defer C.free(unsafe.Pointer(csym))
	sym := C.vkscan_dlsym(h, csym)
	if sym == nil {
		return fmt.Errorf("%s has no vkGetInstanceProcAddr", name)
	}
	vk.SetGetInstanceProcAddr(sym)
	shimSetLoader(sym)
	if err := vk.Init(); err != nil {
		return fmt.Errorf("initialize the Vulkan binding: %w", err)
	}
	loaderReady = true
	return nil
}

// cBytes copies b into C memory (freed by the caller with freeC); the
// binding stores some pointers inside C structs, where Go memory must not
// go.
func cBytes(b []byte) unsafe.Pointer {
	p := C.malloc(C.size_t(len(b)))
	copy(unsafe.Slice((*byte)(p), len(b)), b)
	return p
}

func freeC(p unsafe.Pointer) { C.free(p) }
