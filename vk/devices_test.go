package vk_test

import (
	"strings"
	"testing"

	"github.com/mingru/scans/dispatch/dispatchtest"
	"github.com/mingru/scans/vk"
)

// Devices lists the devices; a device that does not exist is reported
// by Status; two backends in one process, on the first and the last
// device, pass dispatchtest.TestInstances.
func TestTwoBackends(t *testing.T) {
	first := vk.NewOn("0")
	if st := first.Status(); !st.Available {
		t.Skipf("no Vulkan device: %s", st.Reason)
	}
	defer first.Close()
	list, err := first.Devices()
	if err != nil || len(list) == 0 {
		t.Fatalf("Devices: %v, %v", list, err)
	}
	for i, d := range list {
		if d.Backend != "vulkan" || d.Index != i || d.Name == "" {
			t.Errorf("device %d: %+v", i, d)
		}
	}
	if got, want := first.Status().Device, list[0].Name; got != want {
		t.Errorf("NewOn(\"0\") runs on %q, want device 0, %q", got, want)
	}
	second := vk.NewOn(list[len(list)-1].Name)
	defer second.Close()
	if st := second.Status(); !st.Available {
		t.Fatalf("second backend: %s", st.Reason)
	}
	missing := vk.NewOn("99")
	if st := missing.Status(); st.Available || !strings.Contains(st.Reason, "out of range") {
		t.Errorf("NewOn(\"99\"): %v, want unavailable, out of range", st)
	}

	dispatchtest.TestInstances(t, first, second)
}

// TestNewFromInstances runs dispatchtest.TestInstances on a backend made
// by NewFrom on the test's own device and one made by New.
func TestNewFromInstances(t *testing.T) {
	other := vk.New()
	if st := other.Status(); !st.Available {
		t.Skipf("no Vulkan device: %s", st.Reason)
	}
	defer other.Close()
	dispatchtest.TestInstances(t, vk.NewFromTest(t), other)
}
