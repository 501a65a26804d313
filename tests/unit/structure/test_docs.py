"""Docs that cannot drift: the generated docs equal what `make docs` writes today (tools/make_docs.py), the
drawn rule graph shows today's rules and arrows, and every module the config schema's descriptions name exists."""

from __future__ import annotations

import difflib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml
from helpers import markdown
from helpers.tools import config_readme, layering, make_docs

ROOT = layering.ROOT
GENERATED, rule_graph, svg_graph, write = (
    make_docs.GENERATED,
    make_docs.rule_graph,
    make_docs.svg_graph,
    make_docs.write,
)

SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("docs")
    write(folder)
    return folder


@pytest.mark.parametrize("name", GENERATED)
def test_each_generated_doc_is_what_make_docs_writes_today(regenerated: Path, name: str) -> None:
    committed, fresh = (ROOT / "docs" / name).read_text(), (regenerated / name).read_text()
    diff = "".join(
        difflib.unified_diff(
            committed.splitlines(True), fresh.splitlines(True), f"docs/{name}", "what make docs writes now"
        )
    )
    assert committed == fresh, f"docs/{name} is out of date: run make docs\n{diff}"


def test_config_readme_is_what_make_docs_writes_today() -> None:
    """config/README.md's reference part is generated from the schema (defaults, bounds, descriptions)."""
    MARK, README, render = config_readme.MARK, config_readme.README, config_readme.render
    committed, fresh = README.read_text(), render()
    diff = "".join(
        difflib.unified_diff(
            committed.splitlines(True), fresh.splitlines(True), "config/README.md", "what make docs writes now"
        )
    )
    assert committed == fresh, f"config/README.md is out of date: run make docs\n{diff[:5000]}"
    guide = committed.split(MARK)[0]
    stated = re.findall(r"\(default\b[^)]*\)", guide)
    assert not stated, f"config/README.md's guide states defaults by hand (the reference below lists them): {stated}"


def test_the_drawn_rule_graph_shows_todays_rules_and_arrows() -> None:
    rules, arrows = rule_graph()
    drawn_rules, drawn_arrows = svg_graph(ROOT / "docs" / "rulegraph.svg")
    missing, gone = set(rules) - drawn_rules, drawn_rules - set(rules)
    assert not (missing or gone), (
        f"docs/rulegraph.svg is out of date (rules missing: {sorted(missing)}; rules "
        f"that are gone: {sorted(gone)}): run make docs (needs graphviz)"
    )
    assert drawn_arrows == arrows, (
        f"docs/rulegraph.svg is out of date (arrows missing: {sorted(arrows - drawn_arrows)}"
        f"; arrows that are gone: {sorted(drawn_arrows - arrows)}): run make docs"
    )


def _descriptions(node: object) -> list[str]:
    """Every `description` text in a JSON schema, nested ones included."""
    if isinstance(node, dict):
        own = [node["description"]] if isinstance(node.get("description"), str) else []
        return own + [d for value in node.values() for d in _descriptions(value)]
    if isinstance(node, list):
        return [d for value in node for d in _descriptions(value)]
    return []


def unresolved_modules(texts: list[str], src: Path = ROOT / "src") -> list[str]:
    """The `squidflow.x.y` names in `texts` that are neither a module nor a package of the library, nor a name a
    module defines at its top level (`squidflow.frames.decode.read_frames`)."""
    bad = []
    for name in sorted({n.rstrip(".") for text in texts for n in re.findall(r"\bsquidflow(?:\.\w+)+", text)}):
        parts, path = name.split("."), src
        for i, part in enumerate(parts):
            if (path / part).is_dir():
                path = path / part
            elif (path / f"{part}.py").is_file():
                rest = parts[i + 1 :]
                defined = rest and re.search(rf"^(?:def|class) {rest[0]}\b|^{rest[0]}\b.*=", (path / f"{part}.py")
                                             .read_text(), flags=re.M)  # fmt: skip
                if rest and (len(rest) > 1 or not defined):
                    bad.append(name)
                break
            else:
                bad.append(name)
                break
    return bad


def test_every_module_the_config_schema_names_exists() -> None:
    """The schema's descriptions are the config's documentation (config/README.md, the report): a module they name
    that was moved or split sends a reader nowhere."""
    texts = _descriptions(yaml.safe_load(SCHEMA.read_text()))
    bad = unresolved_modules(texts)
    assert not bad, f"{SCHEMA.relative_to(ROOT)} names modules that do not exist (name where they are now): {bad}"


def test_the_module_check_catches_a_module_that_was_split() -> None:
    """squidflow.extract became squidflow.frames.extract; the old name must be caught, the new one and a function
    in it pass."""
    assert unresolved_modules(["Frame extraction (squidflow.extract)."]) == ["squidflow.extract"]
    assert unresolved_modules(["(squidflow.frames.extract, squidflow.frames.decode.no_such_function)"]) == [
        "squidflow.frames.decode.no_such_function"
    ]
    assert unresolved_modules(["squidflow.frames, squidflow.frames.extract and squidflow.contracts.io."]) == []


def files_passed_between_rules(root: Path = ROOT) -> dict[str, set[str]]:
    """The files one rule of the demo writes and another reads that are not Parquet: path -> the reading rules (the
    default target `all` and the run summary, which read every output, left out); from a dry run's job blocks."""
    with tempfile.TemporaryDirectory() as empty:  # a first run: every job planned
        res = subprocess.run(
            [
                str(Path(sys.executable).with_name("snakemake")),
                "-n",
                "--directory",
                empty,
                "--snakefile",
                str(root / "Snakefile"),
                "--configfile",
                str(root / "config" / "config.yaml"),
            ],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert res.returncode == 0, res.stderr[-3000:]
    written, read = set(), []
    for block in re.split(r"\n(?=(?:local)?(?:rule|checkpoint) \w+:)", res.stdout):
        head = re.match(r"(?:local)?(?:rule|checkpoint) (\w+):", block.strip())
        if head:
            for kind, files in re.findall(r"^\s+(input|output): (.*)$", block, flags=re.M):
                if kind == "output":
                    written |= set(files.split(", "))
                else:
                    read += [(head.group(1), f) for f in files.split(", ")]
    out: dict[str, set[str]] = {}
    for rule, f in read:
        if f in written and not f.endswith(".parquet") and rule not in ("all", "run_summary"):
            out.setdefault(f, set()).add(rule)
    return out


def listed(path: str, text: str) -> bool:
    """Whether the reference's list names `path`: by name, by its folder and extension (`folder/*.json`), by a brace
    pattern (`hits_{A,B,K}.csv`), or by its file name alone (`metrics.json`)."""
    folder, name = path.rsplit("/", 1)
    ext = name.split(".", 1)[1] if "." in name else ""
    patterns = {path, f"{folder}/*.{ext}", name, f"{folder}/"}
    patterns |= {re.sub(r"_[A-Z]\.", "_{A,B,K}.", path)}
    return any(f"`{p}`" in text or f"{p}`" in text for p in patterns)


def test_the_reference_lists_every_file_passed_between_rules_that_is_not_parquet() -> None:
    """docs/reference.md, "The workflow": tables between rules are Parquet with a schema; the other files another rule
    reads are listed there, so the claim cannot silently become false."""
    readme = (ROOT / "docs" / "reference.md").read_text()
    section = readme.split("These files passed between rules are not Parquet", 1)[1].split("\n## ", 1)[0]
    missing = sorted(
        f"{f} (read by {', '.join(sorted(rules))})"
        for f, rules in files_passed_between_rules().items()
        if not listed(f, section)
        and not f.endswith((".mp4", ".vtt", ".jpg"))
        and "/shard" not in f
        and not f.startswith(("results/annotation/label_studio/", "results/report/"))
    )
    assert not missing, (
        "docs/reference.md's list of files passed between rules that are not Parquet misses:\n" + "\n".join(missing)
    )


def test_the_architecture_doc_names_the_snakefiles_include_order() -> None:
    included = re.findall(r'^include: "workflow/rules/(\w+)\.smk"', (ROOT / "Snakefile").read_text(), flags=re.M)
    text = " ".join((ROOT / "docs" / "architecture.md").read_text().split())
    sentence = text.split("The Snakefile includes the stages in pipeline order: ", 1)[1].split(". ", 1)[0]
    named = [re.sub(r"\s*\(.*", "", part).strip() for part in re.sub(r"\([^)]*\)", "", sentence).split(",")]
    assert named == [s for s in included if s != "common"], (
        f"docs/architecture.md says {named}; the Snakefile {included}"
    )


def test_every_relative_link_of_the_readme_and_the_docs_resolves() -> None:
    """Issue 60: the README is short and sends the reader on to docs/; every relative link of README.md and of
    docs/*.md names a file that exists and, with `#anchor`, a heading of that file (GitHub's anchors)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert len(pages) > 8 and all(markdown.links(p) for p in pages[:2]), pages
    problems = [problem for page in pages for problem in markdown.broken(page)]
    assert not problems, "\n".join(problems)


def test_a_broken_link_or_anchor_is_found(tmp_path: Path) -> None:
    """The link check on a page of its own: a missing file and a missing anchor are named, a good link passes."""
    (tmp_path / "other.md").write_text("# Other\n\n## The cluster and the cloud\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[a](other.md#the-cluster-and-the-cloud) [b](missing.md) [c](other.md#nowhere) [d](https://x.org/#y)\n"
        "```bash\n[e](not-a-link.md)\n```\n"
    )
    assert markdown.broken(page) == [
        "page.md: missing.md: no such file",
        "page.md: other.md#nowhere: other.md has no heading with that anchor",
    ]
