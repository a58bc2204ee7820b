#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
// matrix_affine_scan backward in the column layout, forming dA in the same
// pass through subgroup shuffles (see affine_bwd.glsl, SG_DA).
#define SG_DA 1
#include "common.glsl"
#include "affine.glsl"
#include "affine_bwd.glsl"
