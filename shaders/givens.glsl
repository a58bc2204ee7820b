// Layout of the angle-fused Givens kernels: one invocation per block
// (lane (b, n)), state of k floats in registers, no shared memory. The
// transition A_t = diag(sigma_t) R(theta_t) is never materialized: R is a
// first layer of rotations of the pairs (0,1), (2,3), ... by the first k/2
// angles, then a second layer of rotations of the pairs (1,2), (3,4), ...
// by the remaining k/2 - 1 angles. Rotation of (i, j) by th:
//   x_i' = cos(th) x_i - sin(th) x_j,  x_j' = sin(th) x_i + cos(th) x_j.

struct Blk {
    bool live;
    uint b, n;
};

Blk block_of_invocation() {
    Blk r;
    uint gid = workgroup_index() * WG + gl_LocalInvocationID.x;
    r.b = gid / pc.N;
    r.n = gid - r.b * pc.N;
    r.live = r.b < pc.B;
    return r;
}

uint step_index(Blk r, uint t) { return (r.b * pc.T + t) * pc.N + r.n; }

// Angle q < K/2 rotates the pair (2q, 2q+1); angle K/2 + q rotates the
// pair (2q+1, 2q+2).
