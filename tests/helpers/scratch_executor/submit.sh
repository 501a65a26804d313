#!/bin/bash
# Submit command of snakemake-executor-plugin-cluster-generic for tests/e2e/test_s3.py: runs one Snakemake job
# script in a fresh, empty scratch folder of its own, in the background, as a node without a shared filesystem would:
# the job finds nothing of the run's working directory, only what it downloads from object storage.
# The workflow's sources are read where they are (on a cluster: a checkout or a container image on each node).
# Snakemake names them in the job script relative to the run's working directory (--snakefile, --configfile), so the
# scratch folders are made beside it ($SQUIDFLOW_SCRATCH_ROOT: the working directory's parent), at the same depth.
# Prints the job's id (its scratch folder), which status.sh reads; the job runs in a session of its own whose id is
# in <id>.pid (the test stops what a killed run left running).
set -eu
scratch=$(mktemp -d "${SQUIDFLOW_SCRATCH_ROOT}/job.XXXXXX")
cp "$1" "$scratch/job.sh"
setsid bash "$(dirname "$0")/run_job.sh" "$scratch" </dev/null >/dev/null 2>&1 &
echo "$!" > "$scratch.pid"
echo "$scratch"
