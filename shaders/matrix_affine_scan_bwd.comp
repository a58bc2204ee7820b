#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// matrix_affine_scan backward (see affine_bwd.glsl).
#include "common.glsl"
#include "affine.glsl"
#include "affine_bwd.glsl"
