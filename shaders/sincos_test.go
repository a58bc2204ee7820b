package shaders

import (
	"math/big"
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestInvTwoPi checks sincos.glsl's INV2PI, the bits of 1/(2 pi) that its
// reduction of huge angles multiplies by, against 1/(2 pi) computed here
// from Machin's formula (pi = 16 atan(1/5) - 4 atan(1/239)) in integers.
func TestInvTwoPi(t *testing.T) {
	src, err := os.ReadFile("sincos.glsl")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)const uint INV2PI\[8\] = uint\[8\]\((.*?)\);`).FindSubmatch(src)
	if m == nil {
		t.Fatal("sincos.glsl: no INV2PI table")
	}
	words := regexp.MustCompile(`0x([0-9a-f]{8})u`).FindAllSubmatch(m[1], -1)
	if len(words) != 8 {
		t.Fatalf("INV2PI has %d words, want 8", len(words))
	}
	// want = floor(2^224 / (2 pi)), from pi to 400 bits.
	const bits = 400
	pi := new(big.Int).Sub(new(big.Int).Mul(big.NewInt(16), arctanInv(5, bits)), new(big.Int).Mul(big.NewInt(4), arctanInv(239, bits)))
	want := new(big.Int).Lsh(big.NewInt(1), bits+224)
	want.Quo(want, new(big.Int).Mul(big.NewInt(2), pi))
	mask := big.NewInt(0xffffffff)
	for i, w := range words {
		got, err := strconv.ParseUint(string(w[1]), 16, 32)
		if err != nil {
			t.Fatal(err)
		}
		var exp uint64 // word 0 is the zero word before the point
		if i > 0 {
			exp = new(big.Int).And(new(big.Int).Rsh(want, uint(32*(7-i))), mask).Uint64()
		}
		if got != exp {
			t.Errorf("INV2PI[%d] = %#08x, want %#08x", i, got, exp)
		}
	}
}

// arctanInv is atan(1/x) times 2^bits, by its series, truncated.
func arctanInv(x int64, bits uint) *big.Int {
	sum := new(big.Int)
	term := new(big.Int).Quo(new(big.Int).Lsh(big.NewInt(1), bits), big.NewInt(x))
	x2 := big.NewInt(x * x)
	for n := int64(1); term.Sign() != 0; n += 2 {
		q := new(big.Int).Quo(term, big.NewInt(n))
		if (n/2)%2 == 0 {
			sum.Add(sum, q)
		} else {
			sum.Sub(sum, q)
		}
		term.Quo(term, x2)
	}
	return sum
}
