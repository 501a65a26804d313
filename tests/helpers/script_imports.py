"""What a rule's script imports before it calls the library, and which heavy libraries that pulls in (with the chain
of modules that pulled each one), measured in a fresh interpreter.

A job's start-up is everything between its process start and the library call: Python, Snakemake's preamble (which
unpickles the `snakemake` object) and the script's module-level imports. `script_imports` reads those imports from
the script (its top-level `import`/`from` statements, in order; an import under an `if` is not made by every job of
the rule and is left out), `run_imports` runs them in a new interpreter and reports the heavy modules that ended up
in `sys.modules` and, for each, the modules being imported when it was first asked for: the chain from the script to
the import. `tests/unit/structure/test_imports.py` checks the heavy sets against what each rule needs; `benchmarks/startup.py`
measures the CPU seconds of the same imports.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"

# The libraries whose import costs a job whole CPU seconds (or pulls in one that does): the list, and what
# else the stages import that pulls in torch (open_clip, torchcodec, transformers) or costs as much (pandas).
HEAVY = ("torch", "torchvision", "torch._dynamo", "timm", "scipy.stats", "scipy.signal", "sklearn", "matplotlib",
         "sentence_transformers", "transformers", "faiss", "label_studio_sdk", "crowdkit", "pandas", "open_clip",
         "torchcodec")  # fmt: skip

# Runs in the child before the script's imports: a meta-path finder that, each time a heavy module not yet imported
# is looked up, records the modules being executed at that moment (the import chain, outermost first); the last
# look-up is the import (a library probing whether one is installed, as polars does, looks it up too).
_TRACER = r"""
import sys, json
HEAVY = set(json.loads(sys.argv[1]))
CHAINS = {}
class _Trace:
    def find_spec(self, name, path=None, target=None):
        if name in HEAVY and name not in sys.modules:  # the last look-up before the import (not a probe's)
            chain, f = [], sys._getframe(1)
            while f is not None:
                if f.f_code.co_name == "<module>":
                    mod = f.f_globals.get("__name__", "?")
                    if not mod.startswith("importlib") and (not chain or chain[-1] != mod):
                        chain.append(mod)
                f = f.f_back
            CHAINS[name] = list(reversed(chain)) + [name]
        return None
sys.meta_path.insert(0, _Trace())
"""
_REPORT = r"""
print("\n" + json.dumps({m: CHAINS.get(m, [m]) for m in sorted(HEAVY) if m in sys.modules}))
"""


def script_imports(path: Path) -> str:
    """The script's module-level import statements, in order, as source (the preamble's `snakemake` module first:
    every job imports it to unpickle its `snakemake` object)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    lines = ["import snakemake.script"]
    lines += [ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return "\n".join(lines) + "\n"


def import_command(path: Path, *, trace: bool = False) -> list[str]:
    """A command that runs `path`'s imports (as `__main__`, under the script's file name) in a fresh interpreter."""
    code = f"exec(compile({script_imports(path)!r}, {str(path)!r}, 'exec'), {{'__name__': '__main__'}})"
    if trace:
        return [sys.executable, "-c", _TRACER + code + _REPORT, json.dumps(HEAVY)]
    return [sys.executable, "-c", code]


def run_imports(path: Path, env: dict[str, str] | None = None) -> dict[str, list[str]]:
    """{heavy module: the chain that imported it} after `path`'s imports, in a fresh interpreter."""
    res = subprocess.run(import_command(path, trace=True), capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=300)  # fmt: skip
    if res.returncode != 0:
        raise RuntimeError(f"the imports of {path.name} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


# Runs the imports of many scripts: the light modules every job imports are imported once, then each script's imports
# run in a fork of that process with the tracer installed (a fresh interpreter per script spent most of the check's
# ~40 CPU seconds starting Python, Snakemake and polars again). The preloaded modules must pull in no heavy module,
# else a fork would not see which script imported it: the process then exits 3 and the caller starts fresh
# interpreters instead.
_PRELOAD = (
    "snakemake.script",
    "polars",
    "numpy",
    "yaml",
    "squidflow.runtime.logs",
    "squidflow.contracts.io",
    "squidflow.contracts.schemas",
)
_FORKS = r"""
import importlib, json, os, sys, traceback
HEAVY_NAMES = set(json.loads(sys.argv[1]))
for name in json.loads(sys.argv[2]):
    importlib.import_module(name)
if HEAVY_NAMES & set(sys.modules):
    print(json.dumps(sorted(HEAVY_NAMES & set(sys.modules))))
    sys.exit(3)
TRACER = sys.argv[3]

def child(path, source, out):
    g = {}
    exec(TRACER, g)
    try:
        exec(compile(source, path, "exec"), {"__name__": "__main__"})
        found = {m: g["CHAINS"].get(m, [m]) for m in sorted(g["HEAVY"]) if m in sys.modules}
        result = {"found": found}
    except BaseException:
        result = {"error": traceback.format_exc()}
    with open(out, "w") as fh:
        json.dump(result, fh)

running = set()
for line in sys.stdin:
    job = json.loads(line)
    if len(running) >= int(sys.argv[4]):
        running.discard(os.wait()[0])
    pid = os.fork()
    if pid == 0:
        try:
            child(*job)
        finally:
            os._exit(0)
    running.add(pid)
while running:
    running.discard(os.wait()[0])
"""


def run_imports_of(
    paths: list[Path], env: dict[str, str] | None = None, jobs: int = os.cpu_count() or 1
) -> dict[str, dict[str, list[str]]]:
    """{script name: `run_imports` of it} for every path, `jobs` at a time: each script's imports run in a fork of
    one process that imported only the light modules every job imports (`_PRELOAD`), so the heavy modules and their
    chains are the same as in a fresh interpreter; where a preloaded module pulls in a heavy one, fresh interpreters."""
    with tempfile.TemporaryDirectory() as tmp:
        todo = [[str(p), script_imports(p), str(Path(tmp) / f"{p.stem}.json")] for p in paths]
        res = subprocess.run([sys.executable, "-c", _FORKS, json.dumps(HEAVY), json.dumps(_PRELOAD), _TRACER,
                              str(jobs)], input="".join(json.dumps(t) + "\n" for t in todo),
                             capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)  # fmt: skip
        if res.returncode == 3:
            return {p.stem: run_imports(p, env) for p in paths}
        if res.returncode != 0:
            raise RuntimeError(f"the import runner failed:\n{res.stderr[-3000:]}")
        out = {}
        for path, _, result in todo:
            got = json.loads(Path(result).read_text())
            if "error" in got:
                raise RuntimeError(f"the imports of {Path(path).name} failed:\n{got['error'][-3000:]}")
            out[Path(path).stem] = got["found"]
        return out


def scripts() -> list[Path]:
    return sorted(SCRIPTS.glob("*.py"))
