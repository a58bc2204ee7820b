#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// matrix_affine_scan forward: H_t = A_t H_{t-1} + X_t per kxv block,
// H_{-1} = H0 or 0.
#include "common.glsl"
#include "affine.glsl"
#include "affine_fwd.glsl"
