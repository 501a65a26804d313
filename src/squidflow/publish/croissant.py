"""croissant.json: Croissant 1.1 JSON-LD (MLCommons) with its Responsible-AI (RAI) fields, written through
mlcroissant's own classes (so the @context is the standard one) and checked by mlcroissant: the metadata validates
and the first records of every record set are generated from the Parquet shards.

Distribution: each shard is a FileObject (contentUrl relative to the folder, sha256, application/x-parquet) and each
config a FileSet of its shards; one RecordSet per config with every column a typed Field (lists `isArray`, the
`images` config's image an ImageObject read from the `bytes` of the `datasets` Image struct).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path

import datasets
import mlcroissant as mlc
from mlcroissant._src.core.context import CroissantVersion

from squidflow.publish.facts import Facts
from squidflow.publish.shards import Shard

PARQUET = "application/x-parquet"
RECORDS_CHECKED = 3  # records generated per record set before a folder counts as published
_TYPES = {
    "string": mlc.DataType.TEXT,
    "int64": mlc.DataType.INTEGER,
    "float64": mlc.DataType.FLOAT,
    "bool": mlc.DataType.BOOL,
}
# The RAI fields a published folder fills, each with the spellings a reader may find: mlcroissant 1.1 writes (and
# its validator knows) rai:dataCollectionTimeFrame, rai:dataAnnotationProtocol and rai:dataAnnotationPlatform, the
# RAI vocabulary's short names are accepted too (squidflow.publish.check).
RAI_KEYS = {
    "rai:dataCollection": ("rai:dataCollection",),
    "rai:dataCollectionType": ("rai:dataCollectionType",),
    "rai:dataCollectionTimeframe": ("rai:dataCollectionTimeFrame", "rai:dataCollectionTimeframe"),
    "rai:annotationProtocol": ("rai:dataAnnotationProtocol", "rai:annotationProtocol"),
    "rai:annotationPlatform": ("rai:dataAnnotationPlatform", "rai:annotationPlatform"),
    "rai:annotationsPerItem": ("rai:annotationsPerItem",),
    "rai:annotatorDemographics": ("rai:annotatorDemographics",),
    "rai:dataLimitations": ("rai:dataLimitations",),
    "rai:dataBiases": ("rai:dataBiases",),
    "rai:personalSensitiveInformation": ("rai:personalSensitiveInformation",),
    "rai:dataUseCases": ("rai:dataUseCases",),
    "rai:dataReleaseMaintenancePlan": ("rai:dataReleaseMaintenancePlan",),
}
OPTIONAL_RAI = (
    "rai:dataCollectionTimeframe",
)  # no fetch times recorded (the release's judgments alone): the card says so


def _context() -> mlc.Context:
    ctx = mlc.Context()
    ctx.conforms_to = CroissantVersion.V_1_1
    return ctx


def _field(ctx, config: str, name: str, feature) -> mlc.Field:
    source = dict(file_set=f"{config}-parquet", extract=mlc.Extract(ctx=ctx, column=name))
    if isinstance(feature, datasets.Image):
        return mlc.Field(
            ctx=ctx,
            id=f"{config}/{name}",
            name=name,
            data_types=[mlc.DataType.IMAGE_OBJECT],
            source=mlc.Source(ctx=ctx, transforms=[mlc.Transform(ctx=ctx, json_path="bytes")], **source),
        )
    if isinstance(feature, datasets.List | datasets.Sequence):
        return mlc.Field(
            ctx=ctx,
            id=f"{config}/{name}",
            name=name,
            data_types=[_TYPES[feature.feature.dtype]],
            is_array=True,
            array_shape="-1",
            source=mlc.Source(ctx=ctx, **source),
        )
    return mlc.Field(
        ctx=ctx,
        id=f"{config}/{name}",
        name=name,
        data_types=[_TYPES[feature.dtype]],
        source=mlc.Source(ctx=ctx, **source),
    )


def annotation_protocol(facts: Facts) -> str:
    text = (
        f"Each image was rated 0-100 for how certain a person is that it comes from a video of the prompted event "
        f"(SQUID-E §3.2): {facts.task_wording or 'see the task pages'} Variant A: the image's own event; variant B: "
        "a similar event. Ratings of annotators who failed the quality checks are kept in `judgments` and left "
        "out of `soft_labels`."
    )
    return text + (f" Pay: {facts.pay}." if facts.pay else "")


def data_collection(facts: Facts) -> str:
    src = ", ".join(facts.sources) or "none recorded"
    text = f"Videos from the sources {src}"
    if facts.queries:
        text += f", found with the queries {', '.join(facts.queries)}"
    text += "; frames extracted and selected per video by squidflow"
    if facts.frames:
        text += f" ({facts.frames['n']} frames per video, {facts.frames['k']} kept by k-means on {facts.frames['backbone']} features)"
    return text + "; then rated by annotators (rai:annotationProtocol)."


def _distribution(ctx: mlc.Context, shards: Sequence[Shard], feats: dict[str, datasets.Features]) -> list:
    """Croissant's distribution: each Parquet shard as a FileObject (size, sha256), each config's shards as a FileSet."""
    files = [
        mlc.FileObject(
            ctx=ctx,
            id=s.path,
            name=s.path,
            content_url=s.path,
            content_size=f"{s.bytes} B",
            encoding_formats=[PARQUET],
            sha256=s.sha256,
        )
        for s in shards
    ]
    return files + [
        mlc.FileSet(
            ctx=ctx,
            id=f"{config}-parquet",
            name=f"{config}-parquet",
            encoding_formats=[PARQUET],
            includes=[f"data/{config}/*.parquet"],
        )
        for config in feats
    ]


def _record_sets(ctx: mlc.Context, feats: dict[str, datasets.Features]) -> list:
    """One RecordSet per config, a field per column (its type from the config's `datasets` features)."""
    return [
        mlc.RecordSet(
            ctx=ctx,
            id=config,
            name=config,
            description=f"The `{config}` config.",
            fields=[_field(ctx, config, n, f) for n, f in fs.items()],
        )
        for config, fs in feats.items()
    ]


def _annotations_per_item(facts: Facts) -> str:
    """rai:annotationsPerItem: per variant, how many ratings an image's soft label is of."""
    return (
        "; ".join(
            f"variant {v}: median {med:g} ratings per image (min {lo}, max {hi})"
            for v, (lo, med, hi) in facts.raters.items()
        )
        or "none"
    )


def metadata_json(facts: Facts, shards: Sequence[Shard], feats: dict[str, datasets.Features]) -> dict:
    """The Croissant 1.1 JSON-LD of a published folder."""
    ctx = _context()
    rai = facts.rai
    limitations = list(rai.get("data_limitations", [])) + [facts.terms]
    md = mlc.Metadata(
        ctx=ctx,
        name=facts.name,
        description=facts.description,
        version=facts.version,
        license=[facts.license_url],
        url=facts.url,
        cite_as=facts.citation.strip(),
        date_published=dt.datetime.now(dt.timezone.utc).replace(microsecond=0),
        creators=[mlc.Person(ctx=ctx, name=c) for c in facts.creators] or None,
        keywords=["human judgments", "uncertainty", "soft labels", "ambiguous images", "event classification"],
        distribution=_distribution(ctx, shards, feats),
        record_sets=_record_sets(ctx, feats),
        data_collection=data_collection(facts),
        data_collection_type=list(rai.get("data_collection_type", [])),
        data_collection_timeframe=list(facts.timeframe) if facts.timeframe else None,
        data_annotation_protocol=[annotation_protocol(facts)],
        data_annotation_platform=[facts.platform_name],
        annotations_per_item=_annotations_per_item(facts),
        annotator_demographics=[facts.annotator_demographics],
        data_limitations=limitations,
        data_biases=list(rai.get("data_biases", [])),
        personal_sensitive_information=list(rai.get("personal_sensitive_information", [])),
        data_use_cases=list(rai.get("data_use_cases", [])),
        data_release_maintenance_plan=rai.get("data_release_maintenance_plan", ""),
    )
    problems = md.ctx.issues.errors
    if problems:
        raise ValueError("croissant.json: " + "; ".join(sorted(problems)))
    return md.to_json()


@contextmanager
def _quiet():
    """mlcroissant logs through absl at INFO; the rule's log keeps only its warnings."""
    logger = logging.getLogger("absl")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def check(path: str | Path, records: int = RECORDS_CHECKED) -> list[str]:
    """mlcroissant's validation of croissant.json and the first `records` records of every record set: one line per
    problem, naming the field or record set (empty: the file validates and every record set yields records)."""
    path = Path(path)
    if not path.exists():
        return [f"{path}: missing"]
    problems = []
    cwd = os.getcwd()
    with _quiet():
        try:
            ds = mlc.Dataset(jsonld=str(path.resolve()))
        except mlc.ValidationError as exc:
            return [
                f"{path}: Croissant validation: {line.strip()}"
                for line in str(exc).splitlines()
                if line.strip() and not line.strip().startswith("Found the following")
            ]
        except Exception as exc:  # mlcroissant fails in its own ways on a file edited by hand (JSON-LD, rdflib)
            return [
                f"{path}: Croissant validation: mlcroissant cannot read it: {type(exc).__name__}: "
                f"{' '.join(str(exc).split())[:300]}"
            ]
        finally:
            os.chdir(cwd)
        for warning in sorted(ds.metadata.ctx.issues.warnings):
            if "not standard" not in warning:
                problems.append(f"{path}: Croissant warning: {warning}")
        for rs in ds.metadata.record_sets:
            try:
                n = sum(1 for _ in zip(range(records), ds.records(rs.uuid), strict=False))
            except Exception as exc:  # mlcroissant raises its GenerationError around any reader error
                cause = exc.__cause__ or exc
                problems.append(
                    f"{path}: record set {rs.name}: records could not be generated: "
                    f"{type(cause).__name__}: {str(cause).splitlines()[0] if str(cause) else ''}"
                )
                continue
            if n == 0:
                problems.append(f"{path}: record set {rs.name}: no records")
    return problems
