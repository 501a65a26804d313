"""The outputs a user may ask for by name: `snakemake results/tables/table3_calibration.md`. A target under results/
that no rule makes stops the run with the tables and figures that exist (instead of Snakemake's
MissingRuleException), and the closest one; `squidflow targets` lists them with the rule that makes each.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

INLINE = r"(?:,(?:[^{}]|\{[^{}]*\})*)?"  # a wildcard's inline constraint, which may hold `{2}`
WILDCARD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)" + INLINE + r"\}")


def requested(workflow) -> list[str]:
    """The targets of this snakemake run: its DAG settings once set, else (while the Snakefile is read) the command
    line's; [] when neither tells (the workflow used through the API or as a module)."""
    settings = getattr(workflow, "dag_settings", None)
    if settings is not None and getattr(settings, "targets", None):
        return list(settings.targets)
    from squidflow.runtime.command_line import arguments

    args = arguments()  # None: another program's command line, no targets to check (docs/upstream.md)
    return [str(t) for t in getattr(args, "targets", None) or []]


def expand(pattern: str, constraints: dict[str, str]) -> list[str]:
    """A rule's output pattern -> the paths it makes where its wildcards' constraints list them (`table="a|b"`), else
    the pattern itself (`results/figures/table3_reliability_{method}.png`)."""
    out = [pattern]
    for name in dict.fromkeys(m.group(1) for m in WILDCARD.finditer(pattern)):
        choices = str(constraints.get(name, ""))
        if not re.fullmatch(r"[A-Za-z0-9_\-]+(\|[A-Za-z0-9_\-]+)*", choices):
            continue
        out = [re.sub(r"\{" + name + INLINE + r"\}", c, p) for p in out for c in choices.split("|")]
    return [re.sub(r"\{(\w+)" + INLINE + r"\}", r"{\1}", p) for p in out]  # `{method,[A-Z]{2}}` -> `{method}`


def rule_outputs(rules) -> dict[str, str]:
    """Every output path of Snakemake `rules` (wildcards listed by their constraints, see `expand`) -> the rule that
    makes it: one list for the unknown-target message (workflow/targets.smk) and `squidflow targets`."""
    return {path: rule.name for rule in rules for out in rule.output
            for path in expand(str(out), rule.wildcard_constraints)}  # fmt: skip


def makes(rules) -> Callable[[str], bool]:
    """`path` -> some rule makes it, matched as Snakemake matches a target to a rule's outputs (wildcard constraints
    included): by Snakemake's own `Rule.is_producer` (docs/upstream.md). Where a rule has none (another Snakemake),
    every path counts as made, and a target no rule makes is left to Snakemake's own message."""
    rules = list(rules)
    if not all(callable(getattr(rule, "is_producer", None)) for rule in rules):
        return lambda path: True
    return lambda path: any(rule.is_producer(path) for rule in rules)


# The rules of the workflow last read in this process, as workflow/targets.smk hands them over from the Snakefile's
# own `workflow.rules` once every rule is defined (see workflow_rules).
_READ: list = []


def remember_rules(rules) -> None:
    """Called by workflow/targets.smk with `workflow.rules`: the parsed rules, for `workflow_rules`."""
    _READ[:] = list(rules)


def workflow_rules(
    snakefile: str | os.PathLike,
    configfiles: Sequence[str | os.PathLike],
    workdir: str | os.PathLike,
    config: Mapping[str, Any] | None = None,
):
    """The rules of the workflow as Snakemake reads it with these config files (`--configfile`; none: the demo's) and
    `config` (`--config`) in `workdir` (no job is planned):
    Snakemake's API reads the Snakefile (`SnakemakeApi.workflow(...).dag()`), and the Snakefile's last include,
    workflow/targets.smk, hands its `workflow.rules` to `remember_rules` (public names only: docs/upstream.md)."""
    from pathlib import Path

    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    _READ.clear()
    with SnakemakeApi(OutputSettings()) as api:
        api.workflow(resource_settings=ResourceSettings(cores=1), snakefile=Path(snakefile),
                     config_settings=ConfigSettings(configfiles=[Path(f) for f in configfiles], config=dict(config or {})),
                     workdir=Path(workdir)).dag()  # fmt: skip
    if not _READ:
        raise RuntimeError(f"{snakefile} defines no rules through workflow/targets.smk (is it squidflow's Snakefile?)")
    return list(_READ)


def targets_text(outputs: dict[str, str]) -> str:
    """`squidflow targets`: each table and figure, and the rule that makes it, one a line."""
    paths = listed(outputs)
    width = max((len(p) for p in paths), default=0)
    return "\n".join(f"{p:<{width}}  rule {outputs[p]}" for p in paths)


def listed(
    paths: Iterable[str], folders: tuple[str, ...] = ("results/tables/", "results/figures/", "results/publish/")
) -> list[str]:
    """The outputs under `folders` that people ask for (tables, figures, the published dataset), sorted, each once."""
    return sorted({p for p in paths if p.startswith(folders)})


def unknown_targets(
    targets: Iterable[str], makes: Callable[[str], bool], rule_names: Iterable[str], workdir: str = "."
) -> list[str]:
    """The targets under results/ that no rule makes (`makes(path)`: some rule's output matches it, wildcard
    constraints included); rule names and other paths are left to Snakemake."""
    names = set(rule_names)
    out = []
    for target in targets:
        if target in names:
            continue
        rel = os.path.relpath(target, workdir) if os.path.isabs(target) else os.path.normpath(target)
        if rel.startswith("results/") and not makes(rel):
            out.append(target)
    return out


def unknown_targets_message(
    targets: Iterable[str],
    makes: Callable[[str], bool],
    outputs: Iterable[str],
    rule_names: Iterable[str],
    workdir: str = ".",
) -> str | None:
    """One message for the targets no rule makes: each with the closest output, then the tables and figures."""
    outputs = list(outputs)
    unknown = unknown_targets(targets, makes, rule_names, workdir)
    if not unknown:
        return None
    lines = []
    for target in unknown:
        near = difflib.get_close_matches(target, outputs, n=1, cutoff=0.5)
        lines.append(f"no rule makes {target}" + (f" (did you mean {near[0]}?)" if near else ""))
    return (
        "; ".join(lines) + ". The tables and figures squidflow makes (a stage not in `stages` still makes its "
        "files when named; {name}: one per configured method; `squidflow targets` lists them with the rule that "
        "makes each): " + ", ".join(listed(outputs))
    )
