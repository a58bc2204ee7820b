package bench

import "testing"

// TestCommitOrder: the environment variable wins, then the commit stamped
// at link time.
func TestCommitOrder(t *testing.T) {
	saved := buildCommit
	defer func() { buildCommit = saved }()
	buildCommit = "0123abc"
	t.Setenv(CommitEnv, "")
	if got := gitCommit(); got != "0123abc" {
		t.Errorf("with a stamped commit: %q, want 0123abc", got)
	}
	t.Setenv(CommitEnv, " 4567def ")
	if got := gitCommit(); got != "4567def" {
		t.Errorf("with %s set: %q, want 4567def", CommitEnv, got)
	}
}
