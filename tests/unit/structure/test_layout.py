"""The layout shows the architecture: stage packages mirror workflow/rules, one name per step, narrow params, and
one source of defaults (the config schema)."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import re
import shutil
from pathlib import Path

import pytest
import yaml
from helpers.runs import rule_blocks

ROOT = Path(__file__).resolve().parents[3]
RULES = ROOT / "workflow" / "rules"
STAGES = sorted(p.stem for p in RULES.glob("*.smk") if p.stem != "common")
SCHEMA = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())


@pytest.mark.parametrize("stage", STAGES)
def test_every_stage_has_its_package_with_a_docstring_citing_a_paper(stage: str) -> None:
    init = ROOT / "src" / "squidflow" / stage / "__init__.py"
    assert init.exists(), f"workflow/rules/{stage}.smk has no package src/squidflow/{stage}/"
    doc = ast.get_docstring(ast.parse(init.read_text())) or ""
    cites = any(paper in doc for paper in ("SQUID-E", "Sherlock", "GuessWhat", "Apples to Oranges"))
    assert len(doc.splitlines()) >= 2 and cites, (
        f"src/squidflow/{stage}/__init__.py: say in three lines what the stage does and which paper section it implements"
    )


def test_each_rule_script_and_log_share_the_rules_name() -> None:
    """A rule runs scripts/<rule>.py and logs to logs/<rule>/. Rules that run one script together (the train rules:
    all seeds of a method, or every run of an experiment, in one job) share its name instead: script and log folder
    named after the script, no rule named so."""
    problems = []
    blocks = list(rule_blocks())
    script_of = {
        rule: found.group(1)
        for _, rule, block in blocks
        if (found := re.search(r'script:\s*\n?\s*"\.\./\.\./scripts/([\w]+)\.py"', block))
    }
    scripts_used = set(script_of.values())
    shared = {s for s in scripts_used if list(script_of.values()).count(s) > 1 and s not in script_of}
    for stage, rule, block in blocks:
        name = script_of.get(rule, rule) if script_of.get(rule) in shared else rule
        if rule in script_of and script_of[rule] != name:
            problems.append(f"rule {rule} ({stage}.smk) runs scripts/{script_of[rule]}.py; name it scripts/{rule}.py")
        log = re.search(r'log:\s*\n\s*(?:\w+=)?(?:expand\(\s*)?"logs/([^/"]+)/', block)
        if not log or log.group(1) != name:
            problems.append(f"rule {rule} ({stage}.smk) logs to {log.group(1) if log else 'nothing'}; use logs/{name}/")
    orphans = sorted(p.stem for p in (ROOT / "scripts").glob("*.py") if p.stem not in scripts_used)
    assert not orphans, f"scripts without a rule of the same name: {orphans}"
    assert not problems, "\n".join(problems)


def test_no_script_reads_the_whole_config() -> None:
    """Every config value a job uses reaches it through params:, so changing it reruns exactly what it affects."""
    readers = [p.name for p in (ROOT / "scripts").glob("*.py") if "snakemake.config" in p.read_text()]
    assert not readers, f"scripts reading snakemake.config (pass the keys as params instead): {readers}"


def test_no_rule_passes_a_whole_scheduling_section() -> None:
    """A job's params never carry keys that only say how it is scheduled (threads, memory)."""
    whole = [
        f"{stage}.smk: rule {rule} passes config[{section!r}] whole"
        for stage, rule, block in rule_blocks()
        for section in re.findall(r'=\s*config\["(\w+)"\],?\s*$', block.split("log:")[0].split("params:")[-1], re.M)
        if "params:" in block and section in ("training", "features")
    ]
    assert not whole, "\n".join(whole)


def _config_classes() -> dict[str, set[str]]:
    """Every library config dataclass (`@defaults_from_schema(section, **keys)`) and the fields it takes from its own
    section: its annotated fields without a value in the class body, less those the decorator names another key for."""
    classes: dict[str, set[str]] = {}
    for path in sorted((ROOT / "src" / "squidflow").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ClassDef):
                continue
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and ast.unparse(deco.func).endswith("defaults_from_schema"):
                    elsewhere = {k.arg for k in deco.keywords}
                    classes[node.name] = {
                        ast.unparse(stmt.target)
                        for stmt in node.body
                        if isinstance(stmt, ast.AnnAssign) and stmt.value is None
                    } - elsewhere
    return classes


def test_no_rules_file_copies_a_config_classs_fields_by_hand() -> None:
    """A job's params are built from the library's config dataclass (`config_fields(TrainConfig, ...)`), so a new
    field reaches the job without a second list to keep equal."""
    classes = _config_classes()
    assert {"TrainConfig", "GuesserConfig", "FramesConfig"} <= set(classes), sorted(classes)
    copies = []
    for smk in sorted(RULES.rglob("*.smk")):
        for name, body in re.findall(r"^(\w+) = \[(.*?)\]", smk.read_text(), flags=re.M | re.S):
            listed = set(re.findall(r'"(\w+)"', body))
            copies += [
                f"{smk.relative_to(ROOT)}: {name} lists {cls}'s fields; use config_fields({cls}, section)"
                for cls, fields in classes.items()
                if len(fields) > 2 and fields <= listed
            ]
    assert not copies, "\n".join(copies)
    uses = "".join(p.read_text() for p in RULES.rglob("*.smk"))
    assert "config_fields(TrainConfig," in uses and "config_fields(GuesserConfig," in uses


def test_every_script_opens_the_same_way() -> None:
    """Docstring naming the rule, then `log = setup(snakemake)` before anything else is imported (so an import that
    fails is told in the rule's log), and no per-line noqa: pyproject.toml says why scripts may import late."""
    problems = []
    for path in sorted((ROOT / "scripts").glob("*.py")):
        text = path.read_text()
        body = ast.parse(text).body
        opening = [ast.unparse(node) for node in body[1:3]]
        doc = ast.get_docstring(ast.parse(text)) or ""
        if not doc.startswith((f"Rule {path.stem}:", f"Checkpoint {path.stem}:")):
            problems.append(f"scripts/{path.name}: the docstring starts 'Rule {path.stem}: what it makes'")
        if opening != ["from squidflow.runtime.logs import setup", "log = setup(snakemake)"]:
            problems.append(
                f"scripts/{path.name}: open with `from squidflow.runtime.logs import setup` and `log = setup(snakemake)`"
            )
        if "noqa" in text:
            problems.append(
                f"scripts/{path.name}: carries a noqa (E402/F821 are ignored for scripts/ in pyproject.toml)"
            )
    assert not problems, "\n".join(problems)


def repeated_results_paths(root: Path = ROOT) -> dict[str, list[str]]:
    """Every results path written out (as a string literal, f-strings too) more than once in the rules files, the
    Snakefile, the scripts and the library: path -> where ("file:line")."""
    files = [
        root / "Snakefile",
        *sorted((root / "workflow").rglob("*.smk")),
        *sorted((root / "scripts").glob("*.py")),
        *sorted((root / "src" / "squidflow").rglob("*.py")),
    ]
    found: dict[str, list[str]] = {}
    for path in files:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            for literal in re.findall(r'"(results/[^"\s]*)"', line):
                found.setdefault(literal, []).append(f"{path.relative_to(root)}:{n}")
    return {p: where for p, where in found.items() if len(where) > 1}


def test_a_results_path_named_in_more_than_one_place_is_a_constant() -> None:
    """A results path is written out once, where its constant is defined: in the rules files (common.smk for what
    several stages use, workflow/rules/inputs/<stage>.smk for one stage's), or in squidflow.contracts.paths when the library
    names it too. Renaming an output is then one edit, and no copy is left behind pointing at the old name."""
    repeats = repeated_results_paths()
    assert not repeats, "\n".join(
        f"{p} is written out {len(w)} times ({', '.join(w)}): name it once as a constant" for p, w in repeats.items()
    )


def test_the_path_check_catches_a_path_written_out_twice(tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "workflow", copy / "workflow")
    shutil.copytree(ROOT / "scripts", copy / "scripts", symlinks=True)
    shutil.copytree(
        ROOT / "src" / "squidflow", copy / "src" / "squidflow", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "Snakefile", copy / "Snakefile")
    assert repeated_results_paths(copy) == {}
    rules = copy / "workflow" / "rules" / "report.smk"
    rules.write_text(rules.read_text() + '\n# planted\nPLANTED = f"results/downloads"\n')
    assert list(repeated_results_paths(copy)) == ["results/downloads"]


# Called with a path expression, these give a path expression (a folder, a name), not data.
_PATH_CALLS = {"str", "list", "tuple", "sorted", "Path", "dirname", "join", "get"}


@dataclasses.dataclass(frozen=True)
class Handed:
    """A call in a script that hands snakemake.input/output paths to a library function: `bound` is what the name
    the call starts from was imported as (module, name), `attrs` the attributes after it, `where` the positions and
    keywords of the path arguments."""

    script: str
    line: int
    bound: tuple[str, str]
    attrs: tuple[str, ...]
    where: tuple[int | str, ...]

    def target(self):
        module = importlib.import_module(self.bound[0])
        obj = getattr(module, self.bound[1], None) or importlib.import_module(".".join(self.bound))
        for attr in self.attrs:
            obj = getattr(obj, attr)
        return obj


def _handed_paths(path: Path) -> list[Handed]:
    """The calls of `path` that hand snakemake.input/output paths to a library function (squidflow, other than
    squidflow.contracts.io and squidflow.runtime.logs)."""
    tree = ast.parse(path.read_text())
    library = {}  # name bound by an import -> whether it is squidflow's (not squidflow.contracts.io)
    bound: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                mods = {node.module, f"{node.module}.{a.name}"}  # `from squidflow.contracts import io` too
                library[a.asname or a.name] = node.module.startswith("squidflow") and not mods & {
                    "squidflow.contracts.io",
                    "squidflow.runtime.logs",
                }
                bound[a.asname or a.name] = (node.module, a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                library[(a.asname or a.name).split(".")[0]] = False
    aliases: set[str] = set()

    def is_path(e: ast.AST) -> bool:
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "snakemake":
            return e.attr in ("input", "output")
        if isinstance(e, ast.Name):
            return e.id in aliases
        if isinstance(e, (ast.Attribute, ast.Subscript, ast.Starred)):
            return is_path(e.value)
        if isinstance(e, ast.Call):
            f = e.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name == "get" and isinstance(f, ast.Attribute):
                return is_path(f.value)
            return name in _PATH_CALLS and any(is_path(a) for a in e.args)
        if isinstance(e, (ast.List, ast.Tuple, ast.Set)):
            return any(is_path(x) for x in e.elts)
        if isinstance(e, ast.Dict):
            return any(is_path(x) for x in e.values if x is not None)
        if isinstance(e, ast.IfExp):
            return is_path(e.body) or is_path(e.orelse)
        return False

    for node in ast.walk(tree):  # names bound to a path (`out = snakemake.output`, `source = Path(snakemake.input[0])`)
        if isinstance(node, ast.Assign):
            pairs = (
                [(node.targets[0], node.value)]
                if not isinstance(node.targets[0], ast.Tuple) or not isinstance(node.value, ast.Tuple)
                else zip(node.targets[0].elts, node.value.elts, strict=True)
            )
            aliases |= {t.id for t, v in pairs if isinstance(t, ast.Name) and is_path(v)}
        elif isinstance(node, ast.For) and isinstance(node.target, ast.Name) and is_path(node.iter):
            aliases.add(node.target.id)
    handed = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            root = node.func
            attrs: list[str] = []
            while isinstance(root, ast.Attribute):
                attrs.insert(0, root.attr)
                root = root.value
            if not (isinstance(root, ast.Name) and library.get(root.id)):
                continue
            where = [i for i, a in enumerate(node.args) if is_path(a)]
            where += [k.arg for k in node.keywords if k.arg and is_path(k.value)]
            if where:
                handed.append(Handed(path.stem, node.lineno, bound[root.id], tuple(attrs), tuple(where)))
    return handed


def _hands_paths(path: Path) -> set[str]:
    """The names of the library functions `path` calls with snakemake.input/output paths."""
    return {h.attrs[-1] if h.attrs else h.bound[1] for h in _handed_paths(path)}


def _path_parameter_problems(handed: Handed) -> list[str]:
    """Where `handed` gives a path to a parameter whose annotation does not say it takes one."""
    import inspect

    func = handed.target()
    params = list(inspect.signature(func).parameters.values())
    name = f"{func.__module__}.{func.__qualname__}"
    problems = []
    for at in handed.where:
        if isinstance(at, int):
            param = params[at] if at < len(params) and params[at].kind.name.startswith("POSITIONAL") else None
        else:
            param = next((p for p in params if p.name == at), None)
        annotation = str(param.annotation) if param is not None else ""
        if not re.search(r"\bPath\b|PathLike", annotation):
            problems.append(
                f"scripts/{handed.script}.py:{handed.line} hands a path to {name}"
                f"({param.name if param is not None else at}: {annotation or 'no such parameter'})"
            )
    return problems


def test_scripts_hand_paths_only_to_parameters_that_say_they_take_one() -> None:
    """Scripts read their inputs and write their outputs through squidflow.contracts.io; the library takes and returns
    frames, so it is tested without files (DEVELOPERS.md, "File I/O"). A library function that must do its own I/O
    (a figure saved through style.save, a folder of many files, a stream larger than memory, a format people hand us)
    says so in its signature: the parameter is annotated `str | Path` (or `os.PathLike`), and its docstring says why.
    A path handed to any other parameter is a script that should read or write the file itself."""
    problems = [p for s in sorted((ROOT / "scripts").glob("*.py")) for h in _handed_paths(s)
                for p in _path_parameter_problems(h)]  # fmt: skip
    assert not problems, (
        "read or write the file in the script through squidflow.contracts.io and hand the library a frame; where "
        "the function must do the I/O itself, annotate the parameter `str | Path` and say why in its "
        "docstring:\n" + "\n".join(problems)
    )


def test_the_io_check_catches_a_path_handed_to_the_library(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from squidflow.contracts import io, schemas\nfrom squidflow.text.keywords import keyword_baselines\n"
        "from squidflow.judgments import scores\n"
        "out = snakemake.output\n"
        "frames = io.read_parquet(snakemake.input.frames, schemas.FRAMES)\n"  # reading in the script: fine
        "keyword_baselines(frames, path=out.keywords)\n"  # an output path through an alias
        "scores.image_scores(str(snakemake.input[0]))\n"  # an input path through str()
        "io.write_parquet(frames, snakemake.output[0], schemas.FRAMES)\n"
    )
    assert _hands_paths(planted) == {"keyword_baselines", "image_scores"}
    problems = [p for h in _handed_paths(planted) for p in _path_parameter_problems(h)]
    assert len(problems) == 2 and all("planted.py" in p for p in problems), problems


def test_a_path_handed_to_a_parameter_that_says_it_takes_one_passes(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from squidflow.judgments.figures import fig3_judgments\n"
        "fig3_judgments(scores, snakemake.output.figure, title='x')\n"
        "fig3_judgments(scores, path=snakemake.output.figure)\n"
    )
    handed = _handed_paths(planted)
    assert len(handed) == 2 and [p for h in handed for p in _path_parameter_problems(h)] == []
