"""A run's Label Studio exports ingested into one judgments table and its ingestion report (SQUID-E §3.2).

`ingest_exports` reads each export (`squidflow.judgments.label_studio.export.read_export`: variant A and B projects,
first and repeat rounds) and checks what no single export shows: an annotator in both variants breaks the paper's
disjoint annotator groups, which stops the run naming both projects and tasks, or with `on_error: skip` drops that
annotator's judgments. The report counts, per export, what Label Studio had besides usable judgments (cancelled
annotations, drafts, updates, superseded annotations, tasks with several annotators, tasks not annotated) and lists
every skipped task. `ingest_exports_to` is rule ingest_judgments' edge when the judgments come from Label Studio.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from squidflow.contracts import schemas
from squidflow.contracts.io import md_escape, write_text
from squidflow.judgments.ingest import (
    JudgmentError,
    KnownImages,
    leave_out_taken_down,
    taken_down_line,
    taken_down_videos,
    write_counts,
)
from squidflow.judgments.label_studio.export import ExportStats, TaskProblem, _frame, expected_images, read_export
from squidflow.judgments.waves import wave_of
from squidflow.presentation.table_format import md_table


def annotators_in_both(df: pl.DataFrame) -> list[tuple[str, dict[str, tuple[str, str]]]]:
    """Annotators with judgments in both variants: (annotator, {variant: (where, task id)}) — the first task of each."""
    out = []
    both = (
        df.group_by("annotator", maintain_order=True)
        .agg(pl.col("variant").n_unique().alias("n"))
        .filter(pl.col("n") > 1)
    )
    for who in sorted(both["annotator"].to_list()):
        mine = df.filter(pl.col("annotator") == who)
        out.append(
            (who, {v: (g["_where"][0], g["_task"][0]) for (v,), g in mine.group_by(["variant"], maintain_order=True)})
        )
    return out


def _read_exports(
    exports: list[dict], *, on_error: str, known_images: set[str] | None, source: str
) -> tuple[pl.DataFrame, list[TaskProblem], ExportStats]:
    """Every export read (`read_export`), its judgments with where they came from (`_where`) and their wave."""
    frames, problems, stats = [], [], ExportStats()
    for e in exports:
        where = e.get("where") or str(e.get("path"))
        expected = expected_images(e["expected"]) if e.get("expected") else None
        df, probs, st = read_export(
            tasks if (tasks := e.get("tasks")) is not None else e["path"],
            where=where,
            on_error=on_error,
            known_images=known_images,
            expected=expected,
            expected_from=str(e.get("expected") or "tasks.json"),
            source=source,
            round_=e.get("round", 1),
        )
        frames.append(
            df.with_columns(pl.lit(where).alias("_where"), pl.lit(e.get("wave") or wave_of(where)).alias("_wave"))
        )
        problems += probs
        stats.add(st, where)
    return (pl.concat(frames) if frames else _frame([])), problems, stats


def _in_both_variants(out: pl.DataFrame, problems: list[TaskProblem], on_error: str) -> list[str]:
    """The annotators who worked in both variants, each a problem naming both projects and tasks (added to
    `problems`); an error unless `on_error` is skip."""
    dropped = []
    for who, places in annotators_in_both(out):
        shown = " and ".join(f"variant {v} in {w} (task {t})" for v, (w, t) in sorted(places.items()))
        problems.append(
            TaskProblem(
                places[min(places)][0], places[min(places)][1], f"annotator {who} worked in both variants: {shown}"
            )
        )
        dropped.append(who)
    if dropped and on_error != "skip":
        p = problems[-len(dropped) :]
        raise JudgmentError(
            f"{len(p)} annotator(s) worked in both variants A and B; the paper's groups are disjoint (SQUID-E §3.2):"
            "\n  " + "\n  ".join(f"{x.problem}" for x in p) + "\nRemove each from one project's members (and delete "
            'their annotations there), then export again; or run with --config judgments=\'{"on_error": "skip"}\' '
            "to drop their judgments in both variants."
        )
    return dropped


def ingest_exports(
    exports: list[dict],
    *,
    on_error: str = "stop",
    known_images: set[str] | None = None,
    source: str = "label_studio",
    on_empty: str = "error",
    removed_videos: frozenset[str] = frozenset(),
    counts: dict | None = None,
) -> tuple[pl.DataFrame, str]:
    """Several exports (each {path | tasks + where, round, expected?}) -> judgments and the ingestion report.

    An annotator in both variants breaks the paper's disjoint groups (SQUID-E §3.2): it stops the run naming both
    projects and tasks, or with `on_error: skip` drops that annotator's judgments (listed in the report)."""
    from squidflow.errors import EmptyError

    out, problems, stats = _read_exports(exports, on_error=on_error, known_images=known_images, source=source)
    dropped_annotators = _in_both_variants(out, problems, on_error)
    out = out.filter(~pl.col("annotator").is_in(dropped_annotators))
    judgments = out.with_columns(pl.col("_where").alias("source_file"), pl.col("_wave").alias("wave")).select(
        list(schemas.JUDGMENTS.columns)
    )
    judgments, taken_down = leave_out_taken_down(judgments, removed_videos, counts)
    report = export_report(problems, stats, len(judgments), dropped_annotators, source, taken_down)
    if judgments.is_empty() and on_empty != "skip":
        raise EmptyError(
            f"no judgment was read from {', '.join(str(e.get('where') or e.get('path')) for e in exports) or 'no export'}: "
            f"{stats.tasks} task(s), {stats.annotations} annotation(s) of which {stats.cancelled} cancelled, "
            f"{len(problems)} task(s) skipped. Annotate and export again (or set `on_empty: skip`)."
        )
    return judgments, report


def export_report(
    problems: list[TaskProblem],
    stats: ExportStats,
    n_judgments: int,
    dropped: list[str],
    source: str,
    taken_down: int = 0,
) -> str:
    label = " (SIMULATED panel, through the Label Studio export format)" if source == "simulated" else ""
    lines = [
        f"# Judgment ingestion report: Label Studio{label}",
        "",
        f"Judgments read: {n_judgments}.",
        "",
        *([taken_down_line(taken_down), ""] if taken_down else []),
        *md_table(
            [
                "export",
                "tasks",
                "annotations",
                "cancelled (skipped)",
                "drafts (ignored)",
                "updated (last version counts)",
                "superseded (an annotator's earlier annotation)",
                "tasks with several annotators",
                "tasks not annotated",
            ],
            [
                (
                    where,
                    s.tasks,
                    s.annotations,
                    s.cancelled,
                    s.drafts,
                    s.updated,
                    s.superseded,
                    s.several,
                    s.unannotated,
                )
                for where, s in [*stats.by_source.items(), ("all", stats)]
            ],
            data=(0,),
        ),
    ]
    lines += [
        "",
        f"Annotators dropped for working in both variants: {len(dropped)}"
        + (f" ({', '.join(md_escape(d) for d in dropped)})" if dropped else "")
        + ".",
        "",
        f"## Skipped tasks: {len(problems)}",
        "",
    ]
    if problems:
        lines += md_table(
            ["export", "task", "problem"], [(p.where, p.task, p.problem) for p in problems], data=(0, 1, 2)
        )
    return "\n".join(lines) + "\n"


def ingest_exports_to(
    judgments_path: str | Path,
    report_path: str | Path,
    *,
    exports: list[dict],
    source: str,
    frames: str | Path | None = None,
    on_error: str = "stop",
    on_empty: str = "error",
    takedown: str | Path | None = None,
    counts_path: str | Path | None = None,
) -> pl.DataFrame:
    """The rule's edge for Label Studio exports: known images from frames.parquet, ingest, write parquet + report
    (`frames`, `takedown`: paths, the rule's inputs; the takedown list's videos' answers are left out, counted)."""
    from squidflow.contracts.io import read_parquet, write_parquet

    removed = taken_down_videos(takedown)
    counts: dict = {}  # what the takedown left out, filled by the ingestion
    known = KnownImages(read_parquet(frames, schemas.FRAMES)["image_id"].to_list(), removed) if frames else None
    df, report = ingest_exports(
        exports,
        on_error=on_error,
        known_images=known,
        source="simulated" if source == "simulated" else "label_studio",
        on_empty=on_empty,
        removed_videos=removed,
        counts=counts,
    )
    write_parquet(df, judgments_path, schemas.JUDGMENTS)
    write_text(report_path, report)
    if counts_path:
        write_counts(counts_path, counts)
    return df
