"""The import layering of `src/squidflow/`, read from the code (ast), and a picture of it.

Floors, bottom to top:
1. the shared floor: `errors` at the bottom, then what every stage uses (contracts, fetch, vocabulary, runtime,
   config, statistics, encoders, presentation), in the order pyproject.toml's import-linter contract states. It
   imports no stage.
2. the stages, in the order the Snakefile includes their rules files (the pipeline's order): a stage may import the
   floor and the stages before it, never a stage after it.
3. `demo`, on top although its rules run first: it makes the offline demo's synthetic videos and SIMULATED
   annotators, reading the vocabulary of the stages whose inputs it simulates (the agreement measures that calibrate
   the panel, the GuessWhat?! question types); no stage imports it.

import-linter checks the floors and that no import circle exists (the contracts in pyproject.toml, `make lint`); here
`mermaid()` draws the import graph (`make docs` writes it to docs/imports.md: tools/make_docs.py).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
FLOOR = "floor"
ON_TOP = ("demo",)
# The `squidflow` command (cli.py) is the program's entry point: it dispatches to stages (`label-studio` runs the
# judgments stage's Label Studio calls), so it sits above every stage, not on the floor; nothing imports it.
ENTRY = "entry point"
ENTRY_POINTS = ("cli",)


def stage_order(root: Path = ROOT) -> list[str]:
    """The stages, lowest first: the Snakefile's includes in order, the ON_TOP stages moved to the end."""
    included = re.findall(r'^include: "workflow/rules/(\w+)\.smk"', (root / "Snakefile").read_text(), flags=re.M)
    stages = [s for s in included if s != "common"]
    return [s for s in stages if s not in ON_TOP] + [s for s in ON_TOP if s in stages]


def layers(root: Path = ROOT) -> list[str]:
    """The layers of pyproject.toml's import-linter contract, top first, as written (`a | b` shares a layer)."""
    contracts = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["type"] == "layers")["layers"]


def floor_layers(root: Path = ROOT) -> list[list[str]]:
    """The shared floor's layers, top first, each the names it holds: the contract's layers below the stages."""
    above = {*ENTRY_POINTS, *stage_order(root)}
    return [[n.strip() for n in re.split(r"[|:]", layer)] for layer in layers(root) if layer not in above]


def imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, imported squidflow module) for every import in a file, function-level imports included."""
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "squidflow":  # from squidflow import cli, version
                yield from ((node.lineno, f"squidflow.{a.name}") for a in node.names)
            else:
                yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names)


def edges(src: Path) -> Iterator[tuple[str, str, Path, int]]:
    """(importing unit, imported unit, file, line) for every import between two units of the library: a unit is a
    top-level module or package of `src` (`judgments`, `config`, `errors`), cli.py the ENTRY."""
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src)
        unit = ENTRY if rel.stem in ENTRY_POINTS and len(rel.parts) == 1 else rel.parts[0].removesuffix(".py")
        for line, module in imports(path):
            parts = module.split(".")
            if parts[0] != "squidflow" or len(parts) < 2 or parts[1] == unit:
                continue
            # a module or package, not a name (`from squidflow import __version__`)
            if (src / parts[1]).is_dir() or (src / f"{parts[1]}.py").is_file():
                yield unit, parts[1], path, line


def mermaid(root: Path = ROOT) -> str:
    """The import graph as a Mermaid flowchart, bottom to top (an arrow: imports): the shared floor as one box with
    its own floors' arrows inside, the stages' arrows to each other and to the floor as a whole."""
    src = root / "src" / "squidflow"
    floor = [name for layer in floor_layers(root) for name in layer]
    pairs = {(u, t) for u, t, _, _ in edges(src)}
    lines = ["flowchart BT", f"  subgraph {FLOOR}"]
    for name in floor[::-1]:  # lowest first
        lines.append(f"    {name}")
        lines += [f"    {name} --> {t}" for u, t in sorted(pairs) if u == name and t in floor]
    lines.append("  end")
    above = [(stage, stage) for stage in stage_order(root)] + [(ENTRY, entry) for entry in ENTRY_POINTS]
    for unit, name in above:  # lowest first, as the layering test orders them; the entry point on top
        if unit == ENTRY:
            lines.append(f'  {name}["{ENTRY}: {name}"]')
        lines += [f"  {name} --> {t}" for t in sorted({FLOOR if t in floor else t for u, t in pairs if u == unit})]
    return "\n".join(lines) + "\n"
