#!/bin/bash
# Status command of snakemake-executor-plugin-cluster-generic (see submit.sh): the job's exit status, once written.
if [ -f "$1.rc" ]; then
    if [ "$(cat "$1.rc")" = 0 ]; then echo success; else echo failed; fi
else
    echo running
fi
