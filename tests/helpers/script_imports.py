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
import subprocess
import sys
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


def scripts() -> list[Path]:
    return sorted(SCRIPTS.glob("*.py"))
