"""`squidflow evaluate`: predictions files scored against human judgments as the evaluation rules score them
(Tables 2 and 8 and the soft-label table, by the same library calls: squidflow.evaluation.scoring).

The command line (squidflow.cli) loads this module by name, so that the floor it belongs to imports no stage.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def label_map_of(values: list[str] | None) -> dict[str, list[str]] | None:
    """--label-map EVENT=LABEL[,LABEL…] (repeatable), or one YAML/JSON file mapping event -> labels."""
    from squidflow.config.validation import ConfigError, load_yaml

    if not values:
        return None
    if len(values) == 1 and "=" not in values[0] and Path(values[0]).is_file():
        data = load_yaml(values[0])
        if not isinstance(data, dict) or not all(isinstance(v, list) and v for v in data.values()):
            raise ConfigError(
                f"{values[0]}: --label-map file must map each event id to a list of labels, e.g. `parade: [parading]`"
            )
        return {str(k): [str(x) for x in v] for k, v in data.items()}
    out: dict[str, list[str]] = {}
    for item in values:
        event, sep, labels = item.partition("=")
        if not sep or not event.strip() or not labels.strip():
            raise ConfigError(f"--label-map {item!r}: write EVENT=LABEL[,LABEL...], e.g. parade=parading")
        out[event.strip()] = [x.strip() for x in labels.split(",") if x.strip()]
    return out


def _config(args: argparse.Namespace) -> dict:
    """With --configfile, the configuration a run reads with the same arguments (squidflow.config.layers: the files
    in order, then --config); without, no config file: the schema's defaults, then --config. The command line's
    evaluation and intervals options go on top."""
    from squidflow.config import layers as config_layers
    from squidflow.config.validation import ConfigError, merge_configs, validate_config

    files = [c for c in args.config if "=" not in c and Path(c).is_file()]
    if files:
        raise ConfigError(
            f"--config {' '.join(files)}: config files go after --configfile (--config takes KEY=VALUE, as "
            "`snakemake --config`)."
        )
    if args.configfile:
        chosen = config_layers.from_arguments(args)
        config = config_layers.resolve(chosen, directory=args.directory, check_paths=False)
    else:
        config = validate_config(config_layers.parse_overrides(args.config))
    overrides: dict = {"evaluation": {}}
    label_map = label_map_of(args.label_map)
    for key, value in (
        ("variant", args.variant),
        ("top_k", args.top_k),
        ("label_map", label_map),
        ("ece_bins", args.ece_bins),
    ):
        if value is not None:
            overrides["evaluation"][key] = value
    intervals = {
        k: v for k, v in (("resamples", args.resamples), ("level", args.level), ("seed", args.seed)) if v is not None
    }
    if intervals:
        overrides["intervals"] = intervals
    return validate_config(merge_configs(config, overrides))


def _models(args: argparse.Namespace) -> list[dict]:
    """One model per predictions file, named by --name (in order) or by the file's name."""
    from squidflow.errors import UserError

    names = args.name or []
    if names and len(names) != len(args.predictions):
        raise UserError(
            f"--name given {len(names)} time(s) for {len(args.predictions)} predictions file(s); "
            "give one --name per file, in the same order, or none"
        )
    return [
        {
            "name": names[i] if names else Path(p).name.split(".")[0],
            "predictions": str(p),
            "images": args.images,
            "reference_accuracy": None,
        }
        for i, p in enumerate(args.predictions)
    ]


def run(args: argparse.Namespace) -> int:
    """Score predictions files against human judgments as the evaluation rules do: Tables 2 and 8 and the
    soft-label table (CSV, Markdown, LaTeX) in --out."""
    from squidflow.contracts import io, schemas
    from squidflow.contracts.io import SchemaError
    from squidflow.errors import UserError
    from squidflow.evaluation.predictions import PredictionsError
    from squidflow.evaluation.scoring import Scoring, evaluate_predictions, read_judgments

    if args.out is None:
        args.out = args.directory / "results" / "evaluate"
    try:
        config = _config(args)
        ev = config["evaluation"]
        models = _models(args)
        judgments, excluded = read_judgments(args.judgments, report=args.annotator_report)
        frames = io.read_parquet(args.frames, schemas.FRAMES) if args.frames else None
        source = (
            "release"
            if Path(args.judgments).suffix.lower() == ".csv"
            else (judgments["source"][0] if len(judgments) else "mturk")
        )
        source = {"squid-e-release": "release"}.get(source, source)
        how = Scoring(
            variant=ev["variant"],
            top_k=ev["top_k"],
            label_map=ev["label_map"],
            intervals=config["intervals"],
            ece_bins=ev["ece_bins"],
            binary_bins=ev["binary_ece_bins"],
            source=source,
            events_config=config["events"],
            vocabulary=args.vocabulary,
            cache_dir=args.out / "downloads",
            frames=frames,
        )
        tables = evaluate_predictions(models, judgments, excluded, how)
    except (UserError, PredictionsError, SchemaError, ValueError) as exc:
        print(f"squidflow evaluate: {exc}", file=sys.stderr)
        return 2
    for name, (table, markdown, latex) in tables.items():
        io.write_csv(table, args.out / f"{name}.csv")
        io.write_text(args.out / f"{name}.md", markdown)
        io.write_text(args.out / f"{name}.tex", latex)
        print(f"{args.out / name}.{{csv,md,tex}}")
    return 0


PREDICTIONS_FORMAT = """\
predictions format (Parquet, CSV or JSON Lines, optionally .gz): one row per (image, rank)
  video_id, frame_index   the judged frame (or `image`: <video_id>_<frame_index>, or a name in --images)
  rank                    1, 2, ... once each per image (rank 1 required)
  label                   the predicted label (evaluation.label_map says which labels count for each event)
  score                   a number; read as a probability for the soft-label measures
Ids may be written as the SQUID-E release writes them (\"\"\"-jmFL0i8_ZU\"\"\" or \"-jmFL0i8_ZU\"): quotes and
whitespace around an id are stripped.

example (CSV):
  video_id,frame_index,rank,label,score
  -jmFL0i8_ZU,120,1,parading,0.81
  -jmFL0i8_ZU,120,2,marching,0.12

  squidflow evaluate my_model.csv --judgments ../shared/data/squid-e/huj_annotations.csv \\
      --label-map parade=parading protest=protesting --name "my model" --out results/evaluate
"""


def add_parser(sub) -> None:
    """The `evaluate` sub-command's arguments."""
    import argparse

    p = sub.add_parser(
        "evaluate",
        help="score predictions files against human judgments: Tables 2, 8 and the soft-label measures with intervals",
        description=run.__doc__,
        epilog=PREDICTIONS_FORMAT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "predictions",
        type=Path,
        nargs="+",
        help="predictions files (Parquet, CSV or JSON Lines; docs/evaluation.md, 'Evaluate your own model')",
    )
    p.add_argument(
        "--judgments",
        type=Path,
        required=True,
        help="the SQUID-E release CSV (huj_annotations.csv) or squidflow's results/judgments/judgments.parquet",
    )
    p.add_argument(
        "--annotator-report",
        type=Path,
        default=None,
        help="results/judgments/annotator_report.parquet: leave out its excluded annotators, as the workflow does",
    )
    p.add_argument(
        "--label-map",
        nargs="+",
        default=None,
        metavar="EVENT=LABELS",
        help="event -> correct labels: EVENT=LABEL[,LABEL...] (repeatable) or a YAML/JSON file "
        "(default: evaluation.label_map)",
    )
    from squidflow.config import layers as config_layers

    # the run's --configfile (whose evaluation section and events to use; none: the schema's defaults), --config and
    # --directory, as snakemake takes them; the flags below override them
    config_layers.add_arguments(p)
    p.add_argument("--name", action="append", default=None, help="a model's name in the tables (one per file)")
    p.add_argument("--images", default=None, help="mapping table image,video_id,frame_index for files keyed by `image`")
    p.add_argument("--vocabulary", default=None, help="label list to check the predicted labels against")
    p.add_argument(
        "--frames",
        type=Path,
        default=None,
        help="results/dataset/frames.parquet: predictions may also name unjudged frames (not scored)",
    )
    p.add_argument("--variant", choices=["A", "B"], default=None)
    p.add_argument("--top-k", type=int, default=None)
    p.add_argument("--ece-bins", type=int, default=None)
    p.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (intervals.resamples)")
    p.add_argument("--level", type=float, default=None, help="interval level (intervals.level)")
    p.add_argument("--seed", type=int, default=None, help="bootstrap seed (intervals.seed)")
    p.add_argument("--out", type=Path, default=None, help="output folder (default: results/evaluate in --directory)")
    p.set_defaults(func=run)
