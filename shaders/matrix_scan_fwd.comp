#version 450
#extension GL_GOOGLE_include_directive : require
// matrix_scan forward: h_t = A_t h_{t-1} + b_t per 2x2 block, h_{-1} = h0
// or 0. The layout is matrix_affine_scan's with k = 2, v = 1.
#include "common.glsl"
#include "affine.glsl"
#include "affine_fwd.glsl"
