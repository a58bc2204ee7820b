package main

import (
	"io"
	"testing"
)

// TestTrains: on eager, a short run of selective recall takes the loss
// from about the mean's (1/12) to a tenth of it, so the recurrence, its
// backward through dispatch and the gates' gradients all work. The
// threshold (0.008) holds for this seed and size with room: the run ends
// near 0.001.
func TestTrains(t *testing.T) {
	t.Setenv("MINGRU_SCAN", "eager")
	c := config{steps: 260, B: 32, T: 48, D: 32, layers: 2, lr: 0.01, seed: 1}
	losses, err := train(c, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	first, last := mean(losses[:25]), mean(losses[len(losses)-25:])
	t.Logf("loss: first 25 steps %.4f, last 25 %.4f", first, last)
	if first < 0.05 {
		t.Errorf("the untrained loss %.4f is already low: the task does not test memory", first)
	}
	if last > 0.008 || last != last {
		t.Errorf("after %d steps the loss is %.4f, want below 0.008", c.steps, last)
	}
}
