#!/usr/bin/env bash
# Installs what the tests need on a Debian (bookworm) machine:
#   - Mesa's lavapipe (a CPU Vulkan 1.3 device), the Vulkan loader and the
#     Khronos validation layer, so the Vulkan backend is tested for real;
#   - glslc, which compiles shaders/ to SPIR-V (go generate, staleness test);
#   - from Debian's non-free component, CUDA 11.8's cuda.h, the stub
#     libcuda.so and nvcc, so the cuda-tagged build compiles and its PTX is
#     checked against its source.
# It is idempotent: packages already present are not fetched again.
set -euo pipefail

need=(mesa-vulkan-drivers libvulkan1 vulkan-validationlayers vulkan-tools glslc)
cuda=(nvidia-cuda-dev nvidia-cuda-toolkit)
if [ "${MINGRU_SKIP_CUDA_TOOLKIT:-0}" = 1 ]; then cuda=(nvidia-cuda-dev); fi

missing=()
for p in "${need[@]}" "${cuda[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: everything already installed"
  exit 0
fi

. "$(dirname "$0")/nonfree-sources.sh"
add_nonfree_sources || true

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
