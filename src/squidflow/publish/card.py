"""The dataset card: README.md with the Hugging Face Hub's YAML header (configs and their data files, license,
task_categories, size_categories, pretty_name) and sections written from the run (squidflow.publish.facts): every
figure in it is read from the run's own outputs, and a SIMULATED panel says so in the first paragraph.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

import jinja2
import yaml

from squidflow.config.bounds import load_bounded
from squidflow.contracts.io import md_escape
from squidflow.judgments.waves import summary_line
from squidflow.presentation.table_format import md_row, md_rule, md_table
from squidflow.publish.facts import SQUID_E_CITATION, Facts, removal_requests
from squidflow.publish.tables import SPLIT_ORDER

SIZE_CATEGORIES = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
)
DEFAULT_CONFIG = "images"
DATASET_PLACEHOLDER = "DATASET_FOLDER"  # the recipe's config names this folder so; the reader puts its path there
VIDEOS_PLACEHOLDER = "VIDEOS_URL"  # ... and where the videos are served from, when the list names them by path
REBUILD_COMMAND = (
    ".venv/bin/snakemake --configfile rebuild.yaml --directory rebuild --cores all results/dataset/frames.parquet"
)


def rebuild_config(f: Facts) -> str:
    """The recipe's config (YAML): the published URL list as a `urls` source, its frames taken exactly, with the
    settings that made the published frames' pixels (decoder, letterbox, image format and quality)."""
    pixels = ("decoder", "letterbox", *(("letterbox_below", "letterbox_to") if f.frames.get("letterbox") else ()))
    frames = {"mode": "exact", **{k: f.frames[k] for k in pixels if k in f.frames}}
    selection = {k: f.frames[k] for k in ("image_format", "image_quality") if k in f.frames}
    source = {"type": "urls", "path": f"{DATASET_PLACEHOLDER}/{f.rebuild_list}"}
    if f.rebuild_relative:
        source["base_url"] = f"{VIDEOS_PLACEHOLDER}/"
    config = {"stages": ["videos", "frames"], "sources": [source], "frames": frames}
    # the frames' split is the published one: no SQUID-E release file is fetched to make its test split (offline)
    config["splits"] = {"release_test": False}
    if selection:
        config["selection"] = selection
    return yaml.safe_dump(config, sort_keys=False, default_flow_style=None, width=100).rstrip()


def size_category(n: int) -> str:
    return next((label for limit, label in SIZE_CATEGORIES if n < limit), "n>10M")


def header(facts: Facts) -> dict:
    """The Hub's YAML header: one entry of `configs` per published config, each split's shards as a glob."""
    configs = []
    for config, splits in facts.splits.items():
        entry = {"config_name": config}
        if config == DEFAULT_CONFIG:
            entry["default"] = True
        entry["data_files"] = [{"split": s, "path": f"data/{config}/{s}-*"} for s in SPLIT_ORDER if s in splits]
        configs.append(entry)
    licence = {"license": facts.license}
    if facts.license == "other":  # the Hub's way to name a licence it does not list
        licence |= {"license_name": facts.license_name, "license_link": facts.license_link}
    return {
        "pretty_name": facts.pretty_name,
        **licence,
        "task_categories": ["image-classification"],
        "tags": ["human-judgments", "uncertainty", "soft-labels", "croissant", "squidflow"],
        "size_categories": [size_category(facts.counts.get(DEFAULT_CONFIG, 0))],
        "configs": configs,
    }


def _list(items) -> str:
    return ", ".join(md_escape(i) for i in items) if items else "none recorded"


def _agreement(facts: Facts) -> list[str]:
    t = facts.agreement
    if t is None or t.is_empty():
        return ["No agreement table was computed in this run."]
    has_ci = "alpha_lo" in t.columns
    lines = [
        "Inter-annotator agreement of the first-round ratings (SQUID-E Table 7, from results/tables/table7_agreement.csv"
        + (", with bootstrap intervals over images, `intervals`" if has_ci else "")
        + "):",
        "",
        md_row(["Variant", "Spearman", "Krippendorff's α", "κ (3 bins)"]),
        md_rule(4),
    ]

    def cell(row, name):
        v = row.get(name)
        if v is None:
            return "–"
        lo, hi = row.get(f"{name}_lo"), row.get(f"{name}_hi")
        return f"{v:.3f} [{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else f"{v:.3f}"

    for row in t.iter_rows(named=True):
        lines.append(
            md_row([md_escape(row["variant"]), cell(row, "spearman"), cell(row, "alpha"), cell(row, "kappa_3")])
        )
    return lines


def card(facts: Facts) -> str:
    """README.md: templates/dataset_card.md.j2 filled from the facts, the Hub's YAML header first."""
    return _template().render(f=facts)


@functools.cache
def _template() -> jinja2.Template:
    """The card's template, read once from the package. Not HTML: no autoescape, every text from outside goes through
    the `md` filter (md_escape); a fact the template names and the facts lack stops the rendering (StrictUndefined).
    Block tags take their line with them (trim_blocks, lstrip_blocks), so the template's lines are the card's."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("squidflow", "templates"),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters |= {
        "md": md_escape,
        "paragraph": _paragraph,
        "num": _num,
        "listing": _list,
        "counted": _counted,
    }
    env.globals |= {
        "yaml_header": _yaml_header,
        "md_table": md_table,
        "agreement": _agreement,
        "summary_line": summary_line,
        "rebuild_config": rebuild_config,
        "removal_requests": removal_requests,
        "changes_section": changes_section,
        "fence_for": _fence,
        "SQUID_E_CITATION": SQUID_E_CITATION,
        "REBUILD_COMMAND": REBUILD_COMMAND,
        "DATASET_PLACEHOLDER": DATASET_PLACEHOLDER,
        "VIDEOS_PLACEHOLDER": VIDEOS_PLACEHOLDER,
    }
    return env.get_template("dataset_card.md.j2")


def _yaml_header(facts: Facts) -> str:
    return yaml.safe_dump(header(facts), sort_keys=False, allow_unicode=True).strip()


def _num(n: int) -> str:
    """A count as the card writes it: 12,345."""
    return f"{n:,}"


def _counted(counts: Mapping[str, int]) -> list[tuple[str, str]]:
    """A table's rows from {name: count}, the counts written as numbers (md_table escapes the names)."""
    return [(k, _num(n)) for k, n in counts.items()]


def _paragraph(text: str) -> str:
    """Data as one inert Markdown paragraph (io.md_escape), a leading `#` escaped too (no heading)."""
    out = md_escape(text)
    return "\\" + out if out.lstrip().startswith("#") else out


VERSION_MARK = "<!-- squidflow-version:"


def version_rows(f) -> list[tuple[str, str]]:
    """Each version of the published data and what it changed, with counts (never a video id): the first release
    (publish.version), each next round of ratings and each change of method (the minor number: the rounds first,
    then the methods, squidflow.publish.methods), the removals on request (the patch number)."""
    from squidflow.videos.takedown import published_version

    rounds = [(w, n) for w, n in f.waves.items() if w != "first"]
    first = f.waves.get("first")
    rows = [
        (
            f.base_version or f.version,
            "first release" + (f": {first:,} ratings of round 1" if first is not None else ""),
        )
    ]
    for k, (wave, n) in enumerate(rounds, start=1):
        rows.append(
            (published_version(f.base_version, 0, k), f"{wave.replace('round', 'round ')}: {n:,} ratings added")
        )
    for j, keys in enumerate(f.method_changes, start=len(rounds) + 1):
        rows.append((published_version(f.base_version, 0, j), f"method changed: {', '.join(keys) or 'settings'}"))
    removed = sum(f.changes.values())
    if removed:
        reasons = ", ".join(f"{reason} {v:,}" for reason, v in f.changes.items())
        what = f"{removed:,} video{'s' if removed != 1 else ''} removed on request ({reasons})"
        if f.taken_down:
            what += (
                f": {f.taken_down.get('ratings', 0):,} ratings and {f.taken_down.get('images', 0):,} rated images "
                "removed"
            )
        rows.append((f.version, what))
    return rows


def changes_section(f) -> list[str]:
    """The card's "Changes": each version with its counts, the removals by reason, and the version and data digest
    `publish check` compares with the data files (an HTML comment)."""
    out = ["## Changes", "", *md_table(["Version", "What changed"], version_rows(f), data=(0, 1)), ""]
    if len(f.waves) > 1 or f.changes or f.method_changes:
        out += [
            "Ratings by round as published (the `wave` column; after the removals, if any). A next round and a change "
            "of method raise the minor number, a removal on request the patch number.",
            "",
        ]
    if f.changes:
        n = sum(f.changes.values())
        out += [
            f"Version {md_escape(f.version)} (from {md_escape(f.base_version)}): {n:,} "
            f"video{'s' if n != 1 else ''} removed on request, with every image, judgment and soft label made "
            "from them. By reason:",
            "",
            *md_table(["Reason", "Videos removed"], _counted(f.changes), data=(0,)),
            "",
        ]
    if f.data_digest:
        out += [f"{VERSION_MARK} {md_escape(f.version)} data-sha256 {f.data_digest} -->", ""]
    return out


def recorded_version(text: str) -> tuple[str, str] | None:
    """(version, data digest) the card records (its VERSION_MARK comment), None when it has none."""
    for line in text.splitlines():
        if line.startswith(VERSION_MARK):
            parts = line[len(VERSION_MARK) :].replace("-->", "").split()
            if len(parts) == 3 and parts[1] == "data-sha256":
                return parts[0], parts[2]
    return None


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in `text`, so the text cannot close it (CommonMark)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def read_header(text: str) -> dict:
    """The YAML header of a card (empty when it has none)."""
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    return (load_bounded(text[3:end], "the card's YAML header") or {}) if end > 0 else {}
