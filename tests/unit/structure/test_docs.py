"""Docs that cannot drift: the generated docs equal what `make docs` writes today (tools/make_docs.py), the
drawn rule graph shows today's rules and arrows, and every module the config schema's descriptions name exists."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest
import yaml
from helpers.tools import config_readme, layering, make_docs

ROOT = layering.ROOT
GENERATED, rule_graph, svg_graph, write = make_docs.GENERATED, make_docs.rule_graph, make_docs.svg_graph, make_docs.write

SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("docs")
    write(folder)
    return folder


@pytest.mark.parametrize("name", GENERATED)
def test_each_generated_doc_is_what_make_docs_writes_today(regenerated: Path, name: str) -> None:
    committed, fresh = (ROOT / "docs" / name).read_text(), (regenerated / name).read_text()
    diff = "".join(difflib.unified_diff(committed.splitlines(True), fresh.splitlines(True), f"docs/{name}",
                                        "what make docs writes now"))
    assert committed == fresh, f"docs/{name} is out of date: run make docs\n{diff}"


def test_config_readme_is_what_make_docs_writes_today() -> None:
    """config/README.md's reference part is generated from the schema (defaults, bounds, descriptions)."""
    MARK, README, render = config_readme.MARK, config_readme.README, config_readme.render
    committed, fresh = README.read_text(), render()
    diff = "".join(difflib.unified_diff(committed.splitlines(True), fresh.splitlines(True), "config/README.md",
                                        "what make docs writes now"))
    assert committed == fresh, f"config/README.md is out of date: run make docs\n{diff[:5000]}"
    guide = committed.split(MARK)[0]
    stated = re.findall(r"\(default\b[^)]*\)", guide)
    assert not stated, f"config/README.md's guide states defaults by hand (the reference below lists them): {stated}"


def test_the_drawn_rule_graph_shows_todays_rules_and_arrows() -> None:
    rules, arrows = rule_graph()
    drawn_rules, drawn_arrows = svg_graph(ROOT / "docs" / "rulegraph.svg")
    missing, gone = set(rules) - drawn_rules, drawn_rules - set(rules)
    assert not (missing or gone), (f"docs/rulegraph.svg is out of date (rules missing: {sorted(missing)}; rules "
                                   f"that are gone: {sorted(gone)}): run make docs (needs graphviz)")
    assert drawn_arrows == arrows, (f"docs/rulegraph.svg is out of date (arrows missing: {sorted(arrows - drawn_arrows)}"
                                    f"; arrows that are gone: {sorted(drawn_arrows - arrows)}): run make docs")


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
                rest = parts[i + 1:]
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
        "squidflow.frames.decode.no_such_function"]
    assert unresolved_modules(["squidflow.frames, squidflow.frames.extract and squidflow.io."]) == []
