"""The config schema is the one source of defaults: every library config dataclass takes its fields' defaults from
it (`squidflow.config.validation.defaults_from_schema`), so no default is written twice."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from squidflow.config.validation import defaults_from_schema, schema_default

SRC = Path(__file__).resolve().parents[3] / "src" / "squidflow"


def _is_config_class(node: ast.ClassDef) -> bool:
    decorated = any("defaults_from_schema" in ast.unparse(d) for d in node.decorator_list)
    return decorated or node.name.endswith(("Config", "Options"))


def _literal_defaults(node: ast.ClassDef) -> list[str]:
    """The fields of a class body given a value written out (a number, a string, a tuple, a `field(default=...)` or a
    `default_factory` lambda of one)."""
    out = []
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            values = [stmt.value]
            if isinstance(stmt.value, ast.Call):  # field(default=..., default_factory=lambda: ...)
                values = [k.value.body if isinstance(k.value, ast.Lambda) else k.value for k in stmt.value.keywords]
            if any(not any(isinstance(n, ast.Name) for n in ast.walk(v)) for v in values):
                out.append(f"{node.name}.{ast.unparse(stmt.target)} = {ast.unparse(stmt.value)}")
    return out


def test_no_literal_config_default_outside_the_schema() -> None:
    problems = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and _is_config_class(node):
                where = path.relative_to(SRC.parent)
                problems += [
                    f"{where}: {lit}: take it from the schema (@defaults_from_schema)"
                    for lit in _literal_defaults(node)
                ]
                if not any("defaults_from_schema" in ast.unparse(d) for d in node.decorator_list):
                    problems.append(f"{where}: class {node.name} does not take its defaults from the schema")
    assert not problems, "\n".join(problems)


def test_the_check_finds_a_literal_default() -> None:
    tree = ast.parse(
        "@dataclass\nclass FooConfig:\n    a: int = 3\n    b: dict = field(default_factory=lambda: {'x': 1})"
        "\n    c: tuple = CONSTANT\n    d: int\n"
    )
    assert _literal_defaults(tree.body[0]) == [
        "FooConfig.a = 3",
        "FooConfig.b = field(default_factory=lambda: {'x': 1})",
    ]


def test_a_config_class_takes_the_schema_default_a_fresh_copy_each_and_tuples_where_typed() -> None:
    @dataclasses.dataclass(frozen=True)
    @defaults_from_schema("splits", seed="intervals.seed")
    class Splits:
        fractions: dict
        seed: int
        annotations: str | None

    a, b = Splits(), Splits()
    assert a.fractions == schema_default("splits.fractions") and a.fractions is not b.fractions
    assert a.seed == schema_default("intervals.seed") and a.annotations is None

    @dataclasses.dataclass(frozen=True)
    @defaults_from_schema("demo")
    class Demo:
        events: tuple[str, ...]

    assert Demo().events == tuple(schema_default("demo.events"))


def test_a_field_the_schema_does_not_know_is_refused_when_the_class_is_made() -> None:
    with pytest.raises(KeyError, match="demo.no_such_key"):

        @defaults_from_schema("demo")
        class Demo:
            no_such_key: int


def test_interval_bounds_are_the_schemas() -> None:
    from squidflow.config.validation import schema_key
    from squidflow.statistics.intervals import IntervalConfig

    minimum = schema_key("intervals.resamples")["minimum"]
    IntervalConfig(resamples=minimum)
    with pytest.raises(ValueError, match=f"at least {minimum}"):
        IntervalConfig(resamples=minimum - 1)
