"""The import layering of `src/squidflow/`, read from the code (ast), and a picture of it.

Floors, bottom to top:
1. the shared floor: the modules at the top of `src/squidflow/` (schemas, io, config, certainty, events, image ids,
   pretrained models, style, ...). They import only each other, never a stage.
2. the stages, in the order the Snakefile includes their rules files (the pipeline's order): a stage may import the
   floor and the stages before it, never a stage after it.
3. `demo`, on top although its rules run first: it makes the offline demo's synthetic videos and SIMULATED
   annotators, reading the vocabulary of the stages whose inputs it simulates (the agreement measures that calibrate
   the panel, the GuessWhat?! question types); no stage imports it.

import-linter checks the floors (the contract in pyproject.toml, `make lint`); here `cycles()` finds import circles
between modules and `mermaid()` draws the stage-level import graph (`make docs` writes it to docs/imports.md:
tools/make_docs.py).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

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


def unit_of(module: str, src: Path) -> str | None:
    """`squidflow.<stage>...` -> the stage, `squidflow.<module>` -> the floor; None outside squidflow."""
    parts = module.split(".")
    if parts[0] != "squidflow" or len(parts) < 2:
        return None
    return parts[1] if (src / parts[1]).is_dir() else FLOOR


def imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, imported squidflow module) for every import in a file, function-level imports included."""
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "squidflow":  # from squidflow import io, schemas
                yield from ((node.lineno, f"squidflow.{a.name}") for a in node.names)
            else:
                yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names)


def edges(src: Path) -> Iterator[tuple[str, str, Path, int]]:
    """(importing unit, imported unit, file, line) for every import between two units of the library."""
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).parts
        unit = rel[0] if len(rel) > 1 else (ENTRY if path.stem in ENTRY_POINTS else FLOOR)
        for line, module in imports(path):
            target = unit_of(module, src)
            if target is not None and target != unit:
                yield unit, target, path, line


def module_graph(src: Path) -> dict[str, set[str]]:
    """Module -> the library modules it imports (function-level imports included; `from squidflow.x import name`
    counts as importing `squidflow.x`, or the submodule `squidflow.x.name` where that is one)."""
    names = {}
    for path in sorted(src.rglob("*.py")):
        parts = path.relative_to(src.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        graph[name] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                wanted = [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                wanted = [a.name for a in node.names]
            else:
                continue
            for module in wanted:
                while module and module not in names:
                    module = module.rpartition(".")[0]
                if module and module != name:
                    graph[name].add(module)
    return graph


def cycles(src: Path = ROOT / "src" / "squidflow") -> list[list[str]]:
    """Every import circle among the library's modules (a strongly connected component of more than one module)."""
    graph = module_graph(src)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def mermaid(root: Path = ROOT) -> str:
    """The stage-level import graph as a Mermaid flowchart, bottom to top (an arrow: imports)."""
    src = root / "src" / "squidflow"
    pairs = {(u, t) for u, t, _, _ in edges(src)}
    floor = sorted(p.stem for p in src.glob("*.py") if p.stem not in ("__init__", *ENTRY_POINTS))
    lines = ["flowchart BT", f'  {FLOOR}["{FLOOR}: {", ".join(floor)}"]']
    for stage in stage_order(root):  # lowest first, as the layering test orders them
        lines += [f"  {stage} --> {target}" for u, target in sorted(pairs) if u == stage]
    for entry in ENTRY_POINTS:  # above every stage; the arrows are those of the entry point's modules
        lines += [f'  {entry}["{ENTRY}: {entry}"]', *(f"  {entry} --> {t}" for u, t in sorted(pairs) if u == ENTRY)]
    return "\n".join(lines) + "\n"
