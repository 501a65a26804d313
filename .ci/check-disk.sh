#!/usr/bin/env bash
# Usage: check-disk.sh VENV GB — before `make setup` builds VENV from nothing, says how much disk is free where it
# goes, and stops early with the fix when it is less than GB (a pip install that runs out of space stops half-way,
# with only "[Errno 28] No space left on device"). A venv that already exists only takes the changed pins: no check.
set -euo pipefail
venv=$1; need_gb=$2
[ -x "$venv/bin/python" ] && exit 0
dir=$(dirname "$(realpath -m "$venv")")
free_gb=$(df -Pk "$dir" | awk 'NR == 2 {printf "%.1f", $4 / 1048576}')
tmp_gb=$(df -Pk "${TMPDIR:-/tmp}" | awk 'NR == 2 {printf "%.1f", $4 / 1048576}')
echo "make setup: ${free_gb} GB free for $venv (in $dir), ${tmp_gb} GB in ${TMPDIR:-/tmp} for pip's downloads; it needs about ${need_gb} GB"
if awk -v f="$free_gb" -v n="$need_gb" 'BEGIN {exit !(f < n)}'; then
  echo "error: not enough disk for $venv: ${free_gb} GB free in $dir, about ${need_gb} GB needed (7.3 GB installed," >&2
  echo "       most of it PyPI's CUDA build of torch). Free some space, or build the venv elsewhere and link it:" >&2
  echo "       python3 -m venv /big/disk/squidflow-venv && ln -s /big/disk/squidflow-venv $venv && make setup" >&2
  exit 1
fi
