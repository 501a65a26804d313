#!/bin/bash
# One job of submit.sh: its script in its scratch folder, then the folder removed; the exit status in <folder>.rc.
scratch="$1"
cd "$scratch"
rc=0
bash job.sh > "$scratch.log" 2>&1 || rc=$?
cd /
rm -rf "$scratch"
echo "$rc" > "$scratch.rc.part" && mv "$scratch.rc.part" "$scratch.rc"
