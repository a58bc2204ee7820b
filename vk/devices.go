//go:build cgo

package vk

import (
	"fmt"

	vk "github.com/vulkan-go/vulkan"

	"github.com/mingru/scans"
)

// Devices implements scans.DeviceLister: every physical device the
// Vulkan loader reports, in its order, which is the index NewOn and
// MINGRU_VK_DEVICE take. It opens an instance of its own and no device.
func (b *Backend) Devices() (list []scans.DeviceInfo, err error) {
	defer recoverTo("devices", &err)
	if err := loadLoader(b.cfg.loader); err != nil {
		return nil, &scans.UnavailableError{Backend: "vulkan", Reason: "Vulkan not available: " + err.Error()}
	}
	d := &device{}
	defer d.destroy()
	if err := d.createInstance(false); err != nil {
		return nil, fmt.Errorf("vk: Devices: %w", err)
	}
	cands, err := d.candidates()
	if err != nil {
		return nil, fmt.Errorf("vk: Devices: %w", err)
	}
	for _, c := range cands {
		var mp vk.PhysicalDeviceMemoryProperties
		vk.GetPhysicalDeviceMemoryProperties(c.phys, &mp)
		mp.Deref()
		var mem int64
		for i := uint32(0); i < mp.MemoryHeapCount; i++ {
			h := mp.MemoryHeaps[i]
			h.Deref()
			if h.Flags&vk.MemoryHeapFlags(vk.MemoryHeapDeviceLocalBit) != 0 && int64(h.Size) > mem {
				mem = int64(h.Size)
			}
		}
		list = append(list, scans.DeviceInfo{Backend: "vulkan", Index: c.index, Name: c.name, Memory: mem,
			Software: c.props.DeviceType == vk.PhysicalDeviceTypeCpu})
	}
	return list, nil
}
