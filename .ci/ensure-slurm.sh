#!/usr/bin/env bash
# The Slurm test cluster's Debian packages (tests/helpers/slurm_cluster.py): munge, MariaDB, slurmdbd, slurmctld, slurmd and
# the client commands. Installs the missing ones in one apt-get call when we are root; otherwise says how.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
declare -A provides=(
  [munge]="munged munge" [mariadb-server]="mariadbd mariadb-install-db mariadb" [slurmdbd]="slurmdbd"
  [slurmctld]="slurmctld" [slurmd]="slurmd" [slurm-client]="sbatch srun squeue sacct sacctmgr scontrol scancel sinfo"
)
missing=()
for pkg in "${!provides[@]}"; do
  for c in ${provides[$pkg]}; do command -v "$c" >/dev/null 2>&1 || { missing+=("$pkg"); break; }; done
done
[ "${#missing[@]}" = 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian packages for the Slurm test cluster: ${missing[*]}"
  apt-get update -qq >/dev/null
  # The packages' install scripts must not start system daemons (the tests start their own, on private ports):
  # a policy-rc.d that refuses, unless the machine already has one (Debian container images do).
  policy=/usr/sbin/policy-rc.d
  own_policy=0
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod +x "$policy"; own_policy=1; fi
  trap 'if [ "$own_policy" = 1 ]; then rm -f "$policy"; fi' EXIT
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "error: the Slurm test cluster needs the Debian packages: ${missing[*]}." >&2
  echo "       Install them as root ('sudo apt-get install ${missing[*]}'), or the Slurm tests are skipped." >&2
  exit 1
fi
