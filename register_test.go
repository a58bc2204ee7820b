package scans

import "testing"

// Registered lists backends in rank order; a name registers once.
func TestRegister(t *testing.T) {
	Register("test-late", 50, func() Backend { return nil })
	Register("test-early", -50, func() Backend { return nil })
	var names []string
	for _, r := range Registered() {
		names = append(names, r.Name)
	}
	if len(names) < 2 || names[0] != "test-early" || names[len(names)-1] != "test-late" {
		t.Errorf("registered in order %v; want test-early first and test-late last", names)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a name twice did not panic")
		}
	}()
	Register("test-late", 1, func() Backend { return nil })
}
