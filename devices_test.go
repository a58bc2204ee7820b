package scans

import (
	"errors"
	"testing"
)

func TestWrapBytes(t *testing.T) {
	for _, tc := range []struct {
		dt    DType
		shape []int
		want  int64
		arg   string
	}{
		{F32, []int{2, 3}, 24, ""},
		{BF16, []int{5}, 10, ""},
		{F16, []int{1, 1, 7}, 14, ""},
		{F32, []int{2, 0}, 0, "shape"},
		{F32, []int{-1}, 0, "shape"},
		{DType(99), []int{2}, 0, "dtype"},
	} {
		n, err := WrapBytes(tc.dt, tc.shape)
		var ae *ArgError
		switch {
		case tc.arg == "" && (err != nil || n != tc.want):
			t.Errorf("WrapBytes(%v, %v) = %d, %v; want %d", tc.dt, tc.shape, n, err, tc.want)
		case tc.arg != "" && (!errors.As(err, &ae) || ae.Arg != tc.arg):
			t.Errorf("WrapBytes(%v, %v): %v, want an ArgError naming %s", tc.dt, tc.shape, err, tc.arg)
		}
	}
}
