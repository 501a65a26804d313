#!/usr/bin/env bash
# Usage: ensure-apt.sh PACKAGE:cmd1,cmd2 ...  — makes sure each command exists, installing the Debian package
# when it is missing and we are root; otherwise stops with a message that says how to install it.
set -euo pipefail
for spec in "$@"; do
  pkg=${spec%%:*}; cmds=${spec#*:}
  missing=0
  for c in ${cmds//,/ }; do command -v "$c" >/dev/null 2>&1 || missing=1; done
  [ "$missing" = 0 ] && continue
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian package '$pkg' (for: $cmds)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null
  else
    echo "error: '$cmds' not found. Install it first, e.g. 'sudo apt-get install $pkg' (Debian/Ubuntu)," >&2
    echo "       'brew install $pkg' (macOS) or 'conda install -c conda-forge $pkg', then rerun." >&2
    exit 1
  fi
done
