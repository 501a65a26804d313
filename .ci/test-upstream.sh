#!/usr/bin/env bash
# `make test-upstream`: the Slurm and report tests on the NEWEST releases of Snakemake, its Slurm executor plugin and
# its job-step plugin (PyPI), before a bound in pyproject.toml moves (docs/upstream.md). Not part of `make test`.
#
# A side venv (default: a cache folder; UPSTREAM_VENV=DIR for another) on top of the project's .venv: a .pth file
# adds .venv's packages behind its own, so only the three packages (and what their newest releases need) are
# installed there. The tests run with the side venv's Python; Slurm jobs inherit it.
set -euo pipefail
base_python="${1:?the project venv python}"
venv="${UPSTREAM_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/squidflow/upstream-venv}"
packages=(snakemake snakemake-executor-plugin-slurm snakemake-executor-plugin-slurm-jobstep)
base_site="$("$base_python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
[ -x "$venv/bin/python" ] || "$base_python" -m venv "$venv"
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
# addsitedir, not a bare path: .venv's own .pth files (editable installs) are read too
echo "import site; site.addsitedir('$base_site')" > "$site/zz-squidflow-project-venv.pth"
"$venv/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
"$venv/bin/python" -m pip install -q --upgrade "${packages[@]}"
# into the side venv itself (with their `snakemake` command), also where .venv has the newest already
"$venv/bin/python" -m pip install -q --force-reinstall --no-deps "${packages[@]}"
echo "test-upstream: newest releases in $venv:"
"$venv/bin/python" -m pip list 2>/dev/null | grep -E '^snakemake(-executor-plugin-slurm(-jobstep)?)? ' | sed 's/^/  /'
echo "test-upstream: squidflow is tested on (squidflow.runtime.upstream.TESTED, the bounds in pyproject.toml):"
"$venv/bin/python" -c \
  'from squidflow.runtime.upstream import TESTED; [print(f"  {d} {lo} to {hi}") for d, (lo, hi) in TESTED.items()]'
exec "$venv/bin/python" -m pytest -p no:xdist -v -rs \
  tests/unit/structure/test_upstream.py tests/unit/floor/test_slurm_profile.py \
  tests/e2e/test_report_browser.py tests/e2e/test_slurm.py
