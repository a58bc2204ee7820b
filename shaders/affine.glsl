// Layout of the block kernels (matrix_scan, matrix_affine_scan).
//
// H_t = A_t H_{t-1} + X_t multiplies from the left, so the v columns of a
// kxv block evolve independently: invocation (lane, c) keeps column c of
// its lane's state (k floats) in registers and walks all T steps; no
// shared memory, no barriers. A lane is (b, n); a workgroup of WG
// invocations holds WG/V whole lanes (V divides WG). T is scanned in one
// chunk per lane: the blocks already give B*N*V independent invocations.

struct Col {
    bool live;
    uint b, n, c;
};

Col column_of_invocation() {
    Col r;
    uint gid = workgroup_index() * WG + gl_LocalInvocationID.x;
    uint lane = gid / V;
    r.c = gid - lane * V;
    r.b = lane / pc.N;
    r.n = lane - r.b * pc.N;
    r.live = r.b < pc.B;
    return r;
}

// Element offsets of step t's A block and of column 0 of its X block.
uint a_index(Col r, uint t) { return ((r.b * pc.T + t) * pc.N + r.n) * K * K; }
uint x_index(Col r, uint t) { return ((r.b * pc.T + t) * pc.N + r.n) * K * V; }
uint init_index(Col r) { return (r.b * pc.N + r.n) * K * V; }
