// Body of the block forward kernel (see affine.glsl); included by
// matrix_affine_scan_fwd.comp and matrix_scan_fwd.comp.

IN_BUFFER(0, A_)
IN_BUFFER(1, X_)
IN_BUFFER(2, H0_)
OUT_BUFFER(3, H_)

void main() {
    Col r = column_of_invocation();
    if (!r.live) {
        return;
    }
    float h[K];
    float hn[K];
    for (uint i = 0u; i < K; i++) {
        h[i] = HAS_INIT ? LD(H0_, pc.off[2] + init_index(r) + i * V + r.c) : 0.0;
    }
    for (uint t = 0u; t < pc.T; t++) {
        uint ai = pc.off[0] + a_index(r, t);
        uint xi = x_index(r, t) + r.c;
        for (uint i = 0u; i < K; i++) {
            float acc = LD(X_, pc.off[1] + xi + i * V);
            for (uint m = 0u; m < K; m++) {
                acc += LD(A_, ai + i * K + m) * h[m];
            }
            hn[i] = acc;
        }
        for (uint i = 0u; i < K; i++) {
            h[i] = hn[i];
            ST(H_, pc.off[3] + xi + i * V, h[i]);
        }
    }
}
