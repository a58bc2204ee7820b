# Sourced by scripts/install-deps.sh and scripts/cuda-headers.sh.
# add_nonfree_sources adds Debian's contrib and non-free components (where
# CUDA's packages live) once, in a file of the project's own, without
# touching the machine's main sources list. It sets SUDO as a side effect
# and returns 0 when it wrote the file (the caller then runs apt-get update).
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo

add_nonfree_sources() {
  local src=/etc/apt/sources.list.d/mingru-nonfree.sources
  [ -f "$src" ] && return 1
  $SUDO tee "$src" >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: contrib non-free non-free-firmware
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
}
