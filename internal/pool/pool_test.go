package pool

import (
	"math/rand/v2"
	"testing"
)

func TestClass(t *testing.T) {
	prev := int64(0)
	for n := int64(1); n < 1<<22; n += 1 + n/97 {
		c := Class(n)
		if c < n {
			t.Fatalf("Class(%d) = %d, under the request", n, c)
		}
		if n > 256 && float64(c-n) >= 0.25*float64(c) {
			t.Fatalf("Class(%d) = %d wastes a quarter or more", n, c)
		}
		if c < prev {
			t.Fatalf("Class(%d) = %d, below Class of a smaller request (%d)", n, c, prev)
		}
		if Class(c) != c {
			t.Fatalf("Class(Class(%d)) = %d, want %d", n, Class(c), c)
		}
		prev = c
	}
	for _, tc := range []struct{ n, want int64 }{{1, 256}, {256, 256}, {257, 320}, {1000, 1024}, {1025, 1280}, {1 << 20, 1 << 20}} {
		if got := Class(tc.n); got != tc.want {
			t.Errorf("Class(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

func TestCache(t *testing.T) {
	var c Cache[int]
	if _, ok := c.Get(256); ok {
		t.Fatal("Get on an empty cache found a buffer")
	}
	r := rand.New(rand.NewPCG(rand.Uint64(), 1))
	want := map[int]int64{}
	total := int64(0)
	for i := 0; i < 100; i++ {
		cl := Class(1 + r.Int64N(1<<16))
		c.Put(cl, i)
		want[i] = cl
		total += cl
	}
	if c.Bytes() != total {
		t.Fatalf("Bytes = %d, want %d", c.Bytes(), total)
	}
	classes := make([]int64, 0, 50)
	for i := 0; i < 50; i++ {
		classes = append(classes, want[i])
	}
	for _, cl := range classes {
		b, ok := c.Get(cl)
		if !ok || want[b] != cl {
			t.Fatalf("Get(%d) = %d, %v: want a buffer of that class", cl, b, ok)
		}
		total -= cl
		delete(want, b)
	}
	if c.Bytes() != total {
		t.Fatalf("Bytes = %d after Gets, want %d", c.Bytes(), total)
	}
	if got := c.Drain(); len(got) != len(want) || c.Bytes() != 0 {
		t.Fatalf("Drain returned %d buffers (Bytes %d), want %d (0)", len(got), c.Bytes(), len(want))
	}
}
