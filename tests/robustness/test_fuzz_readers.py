"""Property-based fuzzing (hypothesis) of every reader of files a person hands squidflow.

The property, for each reader: a file is either read into its schema — and, for a well-formed file the test wrote,
what was written is what is read, no row dropped — or the reader stops with the project's UserError naming the file
(and the line or row, where the format has them). Never another exception, never a silent drop.

Inputs are generated two ways per reader: well-formed files from random values (round trip), and a valid file
mutated (bytes cut, inserted, flipped, lines doubled or dropped, the whole file replaced by random bytes). Each
generated input is counted per reader and outcome (tests/helpers/faults.py: fuzzed); the session summary prints the counts.
Profiles (tests/conftest.py): `ci` (the default, bounded for `make test`), `nightly` (HYPOTHESIS_PROFILE=nightly,
many more examples per reader).
"""

from __future__ import annotations

import copy
import csv
import io
import json
import re
import tempfile
from pathlib import Path

import polars as pl
from helpers.faults import fuzzed
from hypothesis import given
from hypothesis import strategies as st

from squidflow.errors import UserError

# --- generated values and mutations ---------------------------------------------------------------------------------
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)  # any Unicode, controls and blanks included
WORD = st.text(st.characters(exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=1, max_size=10)
SPICE = [
    b",",
    b'"',
    b"\n",
    b"\r\n",
    b"\r",
    b"\x00",
    b"\xff",
    b"\xef\xbb\xbf",
    b"{",
    b"}",
    b"[",
    b":",
    b"-->",
    b"\t",
    b" ",
    b"0",
    b"-1",
    b"1e308",
    b"NaN",
    b"null",
    b"true",
    b"\\",
    b"'",
    b"#",
    b"- ",
    b"&a",
    b"*a",
    b"!!python/",
]


@st.composite
def mutated(draw, seed: bytes) -> bytes:
    """`seed` with a few random edits, or (rarely) random bytes."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=300))
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["cut", "insert", "flip", "delete", "double_line", "drop_line"]))
        if op == "cut":
            del data[pos:]
        elif op == "insert":
            data[pos:pos] = draw(st.sampled_from(SPICE) | st.binary(min_size=1, max_size=4))
        elif op == "flip" and pos < len(data):
            data[pos] = draw(st.integers(0, 255))
        elif op == "delete":
            del data[pos : pos + draw(st.integers(1, 8))]
        elif op in ("double_line", "drop_line"):
            lines = bytes(data).split(b"\n")
            i = draw(st.integers(0, max(0, len(lines) - 1)))
            if op == "double_line":
                lines.insert(i, lines[i])
            elif len(lines) > 1:
                del lines[i]
            data = bytearray(b"\n".join(lines))
    return bytes(data)


def attempt(reader: str, path: Path, read, *, line: bool = True):
    """Run `read()`: its result, or None after a UserError that names the file (and a line/row when `line`)."""
    try:
        out = read()
    except UserError as exc:
        msg = str(exc)
        assert path.name in msg, f"{reader}: the error does not name the file: {msg}"
        if line:
            assert re.search(
                r"\b(line|row|rows|lines|column|columns|header|empty|not UTF-8|Parquet|key)\b|:\d+:", msg
            ), f"{reader}: the error names no line, row or part of the file: {msg}"
        fuzzed(reader, "stopped with a user error naming the file")
        return None
    fuzzed(reader, "read")
    return out


def csv_bytes(header: list[str], rows: list[list[str]]) -> bytes:
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator="\r\n").writerows([header, *rows])  # RFC 4180: a field with \r or \n is quoted
    return buf.getvalue().encode("utf-8")


def in_tmp(name: str, data: bytes):
    """A temporary folder holding `name` with `data` (hypothesis runs many examples per test: no pytest tmp_path)."""
    tmp = tempfile.TemporaryDirectory()
    path = Path(tmp.name) / name
    path.write_bytes(data)
    return tmp, path


# Names an attacker picks for what becomes a file name, a job name or a report label (issue #31)
HOSTILE_NAME = st.sampled_from([
    "<script>alert(1)</script>", "</script><script>alert(1)</script>", "../../../../tmp/x", "/tmp/x", "/", "..", ".",
    "", "a\x00b", "a\nb", "e" * 300, "a/b", "C:\\Windows\\x", "$(touch x)", "%2e%2e%2f", "x" * 64, "x" * 65,
    "file:///etc/passwd", "~/.ssh/id_rsa", "\u202eevil", "con", " parade ",
]) | TEXT  # fmt: skip

# --- URL lists: CSV, Parquet, JSON Lines ---------------------------------------------------------------------------
URL_ROWS = st.lists(
    st.fixed_dictionaries({"url": TEXT, "event": HOSTILE_NAME, "video_id": HOSTILE_NAME, "title": TEXT}), max_size=6
)


def _read_url_list(path):
    from squidflow.videos.sources import read_url_list

    return read_url_list(path)


def assert_url_round_trip(rows, df):
    got = df.select("url", "event", "video_id", "title").to_dicts()
    # a CSV row whose every cell is blank carries nothing and is skipped; any other row comes back as written
    want = [r for r in rows if any(v.strip() for v in r.values())]
    assert got == want


@given(URL_ROWS)
def test_url_list_csv_round_trip(rows):
    tmp, path = in_tmp(
        "urls.csv",
        csv_bytes(
            ["url", "event", "video_id", "title"], [[r[k] for k in ("url", "event", "video_id", "title")] for r in rows]
        ),
    )
    with tmp:
        df = attempt("URL list CSV", path, lambda: _read_url_list(path))
        if df is not None:
            assert_url_round_trip(rows, df)


@given(URL_ROWS)
def test_url_list_jsonl_round_trip(rows):
    tmp, path = in_tmp("urls.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode())
    with tmp:
        df = attempt("URL list JSON Lines", path, lambda: _read_url_list(path))
        assert df is not None and df.select("url", "event", "video_id", "title").to_dicts() == rows


@given(URL_ROWS)
def test_url_list_parquet_round_trip(rows):
    buf = io.BytesIO()
    pl.DataFrame(rows, schema={k: pl.Utf8 for k in ("url", "event", "video_id", "title")}).write_parquet(buf)
    tmp, path = in_tmp("urls.parquet", buf.getvalue())
    with tmp:
        df = attempt("URL list Parquet", path, lambda: _read_url_list(path))
        assert df is not None and df.select("url", "event", "video_id", "title").to_dicts() == rows


URL_SEED_CSV = (
    b'url,event,video_id,title\nhttps://example.org/a.mp4,parade,a1,"A, parade"\nhttps://youtu.be/x,fire,,t\n'
)
URL_SEED_JSONL = (
    b'{"url": "https://example.org/a.mp4", "event": "parade", "video_id": "a1"}\n'
    b'{"url": "https://youtu.be/x", "event": "fire", "title": "t"}\n'
)


@given(mutated(URL_SEED_CSV))
def test_url_list_csv_mutated(data):
    tmp, path = in_tmp("urls.csv", data)
    with tmp:
        attempt("URL list CSV", path, lambda: _read_url_list(path))


@given(mutated(URL_SEED_JSONL))
def test_url_list_jsonl_mutated(data):
    tmp, path = in_tmp("urls.jsonl", data)
    with tmp:
        attempt("URL list JSON Lines", path, lambda: _read_url_list(path))


@given(st.lists(st.fixed_dictionaries({"url": st.one_of(TEXT, st.integers(-(2**63), 2**63 - 1), st.none(), st.floats()),
                                       "event": st.one_of(TEXT, st.booleans(), st.none())}), max_size=5),
       st.booleans())  # fmt: skip
def test_url_list_parquet_of_any_types_and_damaged(rows, damage):
    buf = io.BytesIO()
    pl.DataFrame(rows, strict=False).write_parquet(buf)
    data = buf.getvalue()
    if damage:
        data = data[: len(data) // 2]
    tmp, path = in_tmp("urls.parquet", data)
    with tmp:
        attempt("URL list Parquet", path, lambda: _read_url_list(path))


# --- MTurk batch (HITs) and batch-results CSVs ---------------------------------------------------------------------
MTURK_SEED = csv_bytes(
    [
        "HITId",
        "WorkerId",
        "AssignmentStatus",
        "Input.event_prompt",
        "Input.variant",
        "Input.image_1_id",
        "Input.image_2_id",
        "Answer.rating_1",
        "Answer.rating_2",
    ],
    [
        ["H1", "W1", "Approved", "a wedding", "A", "vid_1_3", "vid_1_7", "80", "20"],
        ["H1", "W2", "Submitted", "a wedding", "B", "vid_1_3", "vid_1_7", "55", "0"],
        ["H2", "W1", "Rejected", "a parade", "A", "v2_0", "v2_9", "100", "x"],
    ],
)


@given(mutated(MTURK_SEED))
def test_mturk_results_mutated(data):
    from squidflow.judgments.ingest import read_mturk_batch

    tmp, path = in_tmp("batch_results.csv", data)
    with tmp:
        out = attempt("MTurk batch results CSV", path, lambda: read_mturk_batch(path, on_error="skip"))
        if out is not None:  # every data row is a judgment row, a named problem or a counted rejection
            judgments, problems, rejected = out
            n_rows = len(_read_csv_rows(data))
            assert problems or rejected or len(judgments) or n_rows == 0


def _read_csv_rows(data: bytes) -> list[list[str]]:
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    return [r for r in rows[1:] if any(c.strip() for c in r)]


KEYWORD_SEED = csv_bytes(
    [
        "HITId",
        "WorkerId",
        "AssignmentStatus",
        "Input.event_prompt",
        "Input.variant",
        "Input.image_1_id",
        "Answer.keyword_1_1",
        "Answer.keyword_1_2",
    ],
    [
        ["H1", "W1", "Approved", "a wedding", "A", "vid_1_3", "cake", "dress"],
        ["H1", "W2", "Approved", "a wedding", "A", "vid_1_3", "", "veil"],
    ],
)


@given(mutated(KEYWORD_SEED))
def test_mturk_keyword_results_mutated(data):
    from squidflow.judgments.keywords import read_keyword_batch

    tmp, path = in_tmp("keyword_results.csv", data)
    with tmp:
        attempt("MTurk keyword results CSV", path, lambda: read_keyword_batch(path, on_error="skip"))


# --- prediction files ----------------------------------------------------------------------------------------------
PRED_ROWS = st.lists(
    st.fixed_dictionaries(
        {"video_id": WORD, "frame_index": st.integers(0, 10**6), "label": WORD, "score": st.floats(-1e6, 1e6)}
    ),
    min_size=1,
    max_size=6,
)


@given(PRED_ROWS)
def test_predictions_round_trip(rows):
    from squidflow.contracts.image_ids import clean_id
    from squidflow.evaluation.predictions import read_predictions

    seen, want = set(), []
    for r in rows:  # one rank-1 prediction per image; ids are read without surrounding quotes and whitespace
        vid = clean_id(r["video_id"])[0]
        if (vid, r["frame_index"]) in seen or not vid or not r["label"].strip():
            continue
        seen.add((vid, r["frame_index"]))
        want.append({**r, "rank": 1})
    buf = io.StringIO(newline="")
    pl.DataFrame(want, schema={"video_id": pl.Utf8, "frame_index": pl.Int64, "label": pl.Utf8, "score": pl.Float64,
                               "rank": pl.Int64}).write_csv(buf)  # fmt: skip
    tmp, path = in_tmp("preds.csv", buf.getvalue().encode())
    with tmp:
        df = attempt("prediction file", path, lambda: read_predictions(path, cache_dir=path.parent))
        if want:
            assert df is not None and len(df) == len(want)
            got = {(r["video_id"], r["frame_index"]): (r["label"], r["score"]) for r in df.iter_rows(named=True)}
            assert got == {
                (clean_id(r["video_id"])[0], r["frame_index"]): (r["label"].strip(), r["score"]) for r in want
            }


PRED_SEED = b"video_id,frame_index,rank,label,score\nv1,3,1,wedding,0.9\nv1,3,2,parade,0.1\nv2,0,1,fire,1\n"


PRED_SEED_JSONL = b"".join(json.dumps(r).encode() + b"\n" for r in pl.read_csv(PRED_SEED).to_dicts())


@given(mutated(PRED_SEED))
def test_predictions_csv_mutated(data):
    from squidflow.evaluation.predictions import read_predictions

    tmp, path = in_tmp("preds.csv", data)
    with tmp:
        attempt("prediction file", path, lambda: read_predictions(path, cache_dir=path.parent))


@given(mutated(PRED_SEED_JSONL))
def test_predictions_jsonl_mutated(data):
    from squidflow.evaluation.predictions import read_predictions

    tmp, path = in_tmp("preds.jsonl", data)
    with tmp:
        attempt("prediction file", path, lambda: read_predictions(path, cache_dir=path.parent))


# --- GuessWhat?! games (JSON Lines) ---------------------------------------------------------------------------------
GAME = {
    "id": 7,
    "image": {"width": 640, "height": 480, "file_name": "a.jpg", "id": 3},
    "objects": [
        {"id": 1, "bbox": [1, 2, 30, 40], "category": "dog", "category_id": 18},
        {"id": 2, "bbox": [50, 60, 10, 10], "category": "cat", "category_id": 17},
    ],
    "object_id": 1,
    "qas": [{"question": "is it a dog?", "answer": "Yes", "id": 1}],
    "status": "success",
}
GAMES_SEED = (json.dumps(GAME) + "\n" + json.dumps({**GAME, "id": 8, "object_id": 2}) + "\n").encode()


@given(mutated(GAMES_SEED))
def test_guesswhat_games_mutated(data):
    from squidflow.litmus.games import read_games_file

    tmp, path = in_tmp("guesswhat.valid.jsonl", data)
    with tmp:
        attempt("GuessWhat?! games", path, lambda: read_games_file(path, "valid"))


# --- WebVTT and SubRip subtitles ------------------------------------------------------------------------------------
VTT_SEED = (
    b"WEBVTT\n\n00:00:01.000 --> 00:00:02.500\nHello <b>there</b>\n\n"
    b"00:00:03.000 --> 00:00:04.000 align:start\nsecond\nline\n"
)
SRT_SEED = b"1\n00:00:01,000 --> 00:00:02,500\nHello\n\n2\n00:00:03,000 --> 00:00:04,000\nsecond\n"
CUE_TEXT = st.text(
    st.characters(exclude_categories=("Cs", "Cc", "Zl", "Zp"), exclude_characters="<>&-"), max_size=15
).filter(lambda t: t.strip() and "-->" not in t)


@given(mutated(VTT_SEED), st.booleans())
def test_subtitles_mutated(data, vtt):
    from squidflow.text.subtitles import read_subtitles

    if not vtt:
        data = data.replace(b"WEBVTT\n\n", b"").replace(b".000", b",000").replace(b".500", b",500")
    tmp, path = in_tmp("v.en." + ("vtt" if vtt else "srt"), data)
    with tmp:
        attempt("WebVTT/SRT subtitles", path, lambda: read_subtitles(path))


@given(st.lists(CUE_TEXT, min_size=1, max_size=5), st.booleans())
def test_subtitles_round_trip(texts, vtt):
    from squidflow.text.subtitles import read_subtitles

    def stamp(s: float) -> str:
        return f"00:00:{int(s):02d}{'.' if vtt else ','}{int(s * 1000) % 1000:03d}"

    blocks = [
        ("" if vtt else f"{i + 1}\n") + f"{stamp(2 * i)} --> {stamp(2 * i + 1.5)}\n{t}\n" for i, t in enumerate(texts)
    ]
    data = (("WEBVTT\n\n" if vtt else "") + "\n".join(blocks)).encode()
    tmp, path = in_tmp("v.en." + ("vtt" if vtt else "srt"), data)
    with tmp:
        cues = attempt("WebVTT/SRT subtitles", path, lambda: read_subtitles(path))
        assert cues is not None
        assert cues["text"].to_list() == [" ".join(t.split()) for t in texts]


# --- comparison ratings ---------------------------------------------------------------------------------------------
RATING_ROWS = st.lists(st.tuples(WORD, WORD, st.sampled_from("123"), st.sampled_from("123")), max_size=6)


@given(RATING_ROWS)
def test_comparison_ratings_round_trip(rows):
    from squidflow.comparison.metrics_sherlock.report import read_comparison_ratings

    tmp, path = in_tmp(
        "ratings.csv", csv_bytes(["query_id", "candidate_id", "annot1", "annot2"], [list(r) for r in rows])
    )
    with tmp:
        df = attempt("comparison ratings CSV", path, lambda: read_comparison_ratings(path))
        assert df is not None
        assert df.rows() == [(q.strip(), c.strip(), int(a), int(b)) for q, c, a, b in rows]


@given(mutated(b"query_id,candidate_id,annot1,annot2\nq1,c1,1,3\nq1,c2,2,2\n"))
def test_comparison_ratings_mutated(data):
    from squidflow.comparison.metrics_sherlock.report import read_comparison_ratings

    tmp, path = in_tmp("ratings.csv", data)
    with tmp:
        attempt("comparison ratings CSV", path, lambda: read_comparison_ratings(path))


# --- config YAML ----------------------------------------------------------------------------------------------------
CONFIG_SEED = (
    b"stages: [videos, frames]\nretry_failed: false\ndemo:\n  videos_per_event: 2\n  seconds: 4\n"
    b"sources:\n  - {type: demo}\nframes:\n  n: 12\n  mode: even\n"
)


@given(mutated(CONFIG_SEED))
def test_config_yaml_mutated(data):
    from squidflow.config.validation import load_config

    tmp, path = in_tmp("run.yaml", data)
    with tmp:
        attempt("config YAML", path, lambda: load_config(path, check_paths=False), line=False)


# --- the SQUID-E release's files (dataset.csv, huj_annotations.csv) and label vocabularies -------------------------
DATASET_SEED = (
    b"video_ID,event,frame0,frame1,frame2,frame3,frame4,frame5\r\n-5VIQPJ8YOA,birthday,190,950,1900,3990,"
    b'5700,6460\r\n"""-OMFa5uJuDk""",birthday,0,835,2171,2505,3340,4843\r\nbanner01,fire,,,,,,\r\n'
)


@given(mutated(DATASET_SEED))
def test_release_dataset_csv_mutated(data):
    from squidflow.vocabulary.release import read_dataset_csv

    tmp, path = in_tmp("dataset.csv", data)
    with tmp:
        table = attempt("SQUID-E release dataset.csv", path, lambda: read_dataset_csv(path))
        if table is not None:  # every data row is a release row or a reported quirk
            n_rows = len(_read_csv_rows(data.replace(b"\r\n", b"\n"))) if _utf8(data) else 0
            assert len(table.rows) + len(table.quirks) >= min(n_rows, 1)


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


HUJ_SEED = (
    b"vid_ID,frame_num,task_var,event,huj_0,huj_1,huj_2\nnnqZqPuPQ7E,2755,a,COVID test,1,12,5\n"
    b"RvGDhjkZ_Gg,1749,b,COVID test,61,70,100\n"
)


@given(mutated(HUJ_SEED))
def test_release_judgments_csv_mutated(data):
    from squidflow.judgments.ingest import read_release

    tmp, path = in_tmp("huj_annotations.csv", data)
    with tmp:
        attempt("SQUID-E release judgments CSV", path, lambda: read_release(path, on_error="skip"))


@given(
    mutated(b'{"verbs": {"jumping": {}, "eating": {}}}'), st.sampled_from(["space.json", "verb_id.tab", "labels.txt"])
)
def test_label_vocabulary_mutated(data, name):
    from squidflow.evaluation.labels import read_vocabulary

    if not name.endswith(".json"):
        data = data.replace(b'{"verbs": {', b"1\t").replace(b": {}, ", b"\n2\t").replace(b": {}}}", b"\n")
    tmp, path = in_tmp(name, data)
    with tmp:
        attempt("label vocabulary", path, lambda: read_vocabulary(path), line=False)


# --- Label Studio JSON exports: ratings (A/B), keywords (task K), comparison sets; the imported tasks.json --------
JUNK = st.sampled_from([float("nan"), float("inf"), float("-inf"), -1, 101, 50.5, 1e308, 2**70, True, None, "", "x",
                        "50", [], {}, [1], {"a": 1}, "v_1", "é", 0])  # fmt: skip
LS_WORD = WORD.filter(lambda s: s.strip() == s)
# a video id squidflow writes into a task: no surrounding quotes (ids are read without them, issue 32)
LS_VIDEO = LS_WORD.filter(lambda s: s.strip("\"'").strip() == s)


def _nodes(obj, path=()):
    """Every (path, value) in a parsed JSON document, the root included."""
    yield path, obj
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for k, v in items:
        yield from _nodes(v, (*path, k))


@st.composite
def json_mutated(draw, seed: list) -> bytes:
    """`seed` (a Label Studio export) with a few structural edits — a value replaced by one of the wrong type or out
    of range (NaN, inf, -1, 101, a string, null, a list), a key or item deleted, a task or annotation doubled, a task
    id changed — then written as JSON (NaN and Infinity as Python writes them) and, sometimes, its bytes mutated."""
    doc = json.loads(json.dumps(seed))
    for _ in range(draw(st.integers(1, 3))):
        nodes = list(_nodes(doc))
        path, value = draw(st.sampled_from(nodes))
        op = draw(st.sampled_from(["replace", "delete", "double", "task_id"]))
        if not path:
            continue
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        key = path[-1]
        if op == "replace":
            parent[key] = copy.deepcopy(draw(JUNK))  # JUNK's lists and dicts are shared: a copy
        elif op == "delete":
            del parent[key]
        elif op == "double" and isinstance(parent, list):
            parent.insert(key, json.loads(json.dumps(value)))
        elif op == "task_id" and isinstance(doc, list) and (tasks := [t for t in doc if isinstance(t, dict)]):
            draw(st.sampled_from(tasks))["id"] = draw(st.sampled_from([1, 2, 999, "7", None]))
    data = json.dumps(doc, ensure_ascii=draw(st.booleans())).encode()
    return draw(mutated(data)) if draw(st.integers(0, 3)) == 0 else data


@st.composite
def rating_judgments(draw) -> pl.DataFrame:
    """Judgments as the A/B projects collect them: per HIT one variant and prompt, 1-6 images, each annotator (one
    position each) rating every image 0-100."""
    rows, seen_hits = [], set()
    for _ in range(draw(st.integers(0, 3))):
        hit = draw(LS_WORD)
        if hit in seen_hits:
            continue
        seen_hits.add(hit)
        variant, prompt = draw(st.sampled_from("AB")), draw(LS_WORD)
        images = draw(
            st.lists(
                st.tuples(LS_VIDEO.filter(lambda v: v.isprintable()), st.integers(0, 10**6)),
                min_size=1,
                max_size=6,
                unique_by=lambda t: f"{t[0]}_{t[1]}",
            )
        )
        for pos, who in enumerate(draw(st.lists(LS_WORD, min_size=1, max_size=3, unique=True))):
            rows += [
                {
                    "video_id": v,
                    "frame_index": f,
                    "event_prompt": prompt,
                    "variant": variant,
                    "annotator": who,
                    "position": pos,
                    "hit": hit,
                    "rating": draw(st.integers(0, 100)),
                    "round": 1,
                    "source": "label_studio",
                }
                for v, f in images
            ]
    return pl.DataFrame(rows, schema=schemas_judgments()) if rows else pl.DataFrame(schema=schemas_judgments())


def schemas_judgments():
    from squidflow.contracts import schemas

    return {c: schemas.JUDGMENTS.columns[c] for c in schemas.JUDGMENTS.required}  # a reader's rows: no file, no wave


def _ls_read(reader: str, path: Path, read):
    """A Label Studio reader with on_error=skip: its result, or None after a UserError naming the file. Every task is
    read, listed as a problem (with its task id) or counted as not annotated — never dropped without a word."""
    out = attempt(reader, path, read, line=False)
    if out is not None:
        df, problems, stats = out
        assert all(path.name in p.where and str(p.task) for p in problems)
        assert stats.tasks == stats.unannotated or len(df) or problems, f"{reader}: every task dropped silently"
    return out


def _ls_stop(reader: str, path: Path, read) -> None:
    """A Label Studio reader with on_error=stop: read, or a UserError naming the file and the task id (or saying
    the whole file is not an export)."""
    try:
        read()
    except UserError as exc:
        assert re.search(r": task [^:]+:|not a Label Studio JSON export", str(exc)), f"{reader}: names no task: {exc}"
    attempt(reader, path, read, line=False)


@given(rating_judgments())
def test_label_studio_ratings_export_round_trip(judgments):
    from squidflow.judgments.label_studio.export import read_export
    from squidflow.judgments.label_studio.tasks import export_from_judgments

    tmp, path = in_tmp("A.json", json.dumps(export_from_judgments(judgments), ensure_ascii=False).encode())
    with tmp:
        df, problems, stats = _ls_read("Label Studio ratings export", path, lambda: read_export(path))
        assert not problems and stats.tasks == judgments["hit"].n_unique()
        cols = list(judgments.columns)
        assert df.select(cols).sort(cols).to_dicts() == judgments.sort(cols).to_dicts()


def _ratings_seed() -> list:
    from squidflow.judgments.label_studio.tasks import export_from_judgments

    rows = [
        {
            "video_id": v,
            "frame_index": f,
            "event_prompt": "a wedding",
            "variant": "A",
            "annotator": who,
            "position": p,
            "hit": h,
            "rating": r,
            "round": 1,
            "source": "label_studio",
        }
        for h, imgs in (("A-0", [("v1", 3), ("v_2", 7)]), ("A-1", [("v3", 0)]))
        for p, who in enumerate(["ann@x.org", "bob"])
        for (v, f), r in zip(imgs, [80, 20], strict=False)
    ]
    return export_from_judgments(pl.DataFrame(rows, schema=schemas_judgments()))


RATINGS_SEED = _ratings_seed()


@given(json_mutated(RATINGS_SEED), st.booleans())
def test_label_studio_ratings_export_mutated(data, with_expected):
    from squidflow.judgments.label_studio.export import _images_of, read_export

    tmp, path = in_tmp("A.json", data)
    with tmp:
        expected = {t["data"]["hit"]: _images_of(t["data"]) for t in RATINGS_SEED} if with_expected else None
        known = {"v1_3", "v_2_7", "v3_0"} if with_expected else None
        out = _ls_read(
            "Label Studio ratings export",
            path,
            lambda: read_export(path, on_error="skip", expected=expected, known_images=known),
        )
        if out is not None:
            df, problems, stats = out
            assert df["_task"].n_unique() + len(problems) + stats.unannotated >= stats.tasks
            assert df["rating"].is_between(0, 100).all()
            numbers = {
                r["value"]["number"]
                for _, r in _nodes(json.loads(data))
                if isinstance(r, dict)
                and isinstance(r.get("value"), dict)
                and type(r["value"].get("number")) in (int, float)
            }
            assert set(df["rating"].to_list()) <= numbers, "a rating read that is no number in the file (true?)"
        _ls_stop("Label Studio ratings export", path, lambda: read_export(path))


KEYWORD_WORD = st.text("abcxyzé0123 -", min_size=1, max_size=12).filter(lambda s: s.strip() == s and s.strip("- "))


def keyword_export(tasks: list[tuple[str, list[str], list[tuple[str, list[list[str]]]]]]) -> list[dict]:
    """(hit, image ids, [(annotator, keywords per image)]) -> a task-K export as Label Studio gives it."""
    out, aid = [], 0
    for tid, (hit, images, by_annotator) in enumerate(tasks, start=1):
        data = {"hit": hit, "variant": "K", **{f"image_{i}_id": img for i, img in enumerate(images, start=1)}}
        anns = []
        for who, words in by_annotator:
            aid += 1
            anns.append(
                {
                    "id": aid,
                    "completed_by": {"id": aid, "email": who},
                    "was_cancelled": False,
                    "created_at": f"2026-01-01T10:00:{aid:02d}.000000Z",
                    "updated_at": f"2026-01-01T10:00:{aid:02d}.000000Z",
                    "result": [
                        {
                            "from_name": f"keywords_{i}",
                            "to_name": f"image_{i}",
                            "type": "textarea",
                            "value": {"text": w},
                        }
                        for i, w in enumerate(words, start=1)
                    ],
                }
            )
        out.append({"id": tid, "data": data, "annotations": anns, "drafts": []})
    return out


@given(st.lists(st.tuples(LS_WORD, st.lists(st.tuples(LS_VIDEO, st.integers(0, 999)), min_size=1, max_size=3,
                                            unique=True), st.lists(LS_WORD, min_size=1, max_size=2, unique=True),
                          st.data()), max_size=3, unique_by=lambda t: t[0]))  # fmt: skip
def test_label_studio_keyword_export_round_trip(spec):
    from squidflow.judgments.keywords import normalise_keyword
    from squidflow.judgments.label_studio.export import read_keyword_export

    tasks, want = [], []
    for hit, images, annotators, data in spec:
        anns = []
        for who in annotators:
            words = [data.draw(st.lists(KEYWORD_WORD, min_size=1, max_size=3)) for _ in images]
            anns.append((who, words))
            want += [
                {
                    "video_id": v,
                    "frame_index": f,
                    "annotator": who,
                    "hit": hit,
                    "position": j,
                    "keyword": w,
                    "normalised": normalise_keyword(w),
                    "round": 1,
                    "source": "label_studio",
                }
                for (v, f), ws in zip(images, words, strict=True)
                for j, w in enumerate(ws, start=1)
            ]
        tasks.append((hit, [f"{v}_{f}" for v, f in images], anns))
    tmp, path = in_tmp("K.json", json.dumps(keyword_export(tasks)).encode())
    with tmp:
        df, problems, stats = _ls_read("Label Studio keyword export", path, lambda: read_keyword_export(path))
        assert not problems and stats.tasks == len(tasks)
        assert df.to_dicts() == want


KEYWORD_EXPORT_SEED = keyword_export(
    [
        ("K-0", ["v1_3", "v_2_7"], [("ann", [["cake", "dress"], ["veil"]]), ("bob", [["a b"], ["c"]])]),
        ("K-1", ["v3_0", ""], [("ann", [["fire"], []])]),
    ]
)


@given(json_mutated(KEYWORD_EXPORT_SEED))
def test_label_studio_keyword_export_mutated(data):
    from squidflow.judgments.label_studio.export import read_keyword_export

    tmp, path = in_tmp("K.json", data)
    with tmp:
        _ls_read(
            "Label Studio keyword export",
            path,
            lambda: read_keyword_export(path, on_error="skip", known_images={"v1_3", "v_2_7", "v3_0"}),
        )
        _ls_stop("Label Studio keyword export", path, lambda: read_keyword_export(path))


def comparison_export(sets: list[tuple[str, list[str], list[tuple[str, list[int]]]]]) -> list[dict]:
    """(query id, candidate ids, [(annotator, 1-3 per candidate)]) -> a comparison-set export."""
    out, aid = [], 0
    for tid, (qid, candidates, by_annotator) in enumerate(sets, start=1):
        data = {"hit": f"comparison-{qid}", "query_id": qid, "image": "https://example.org/i.jpg"}
        for i, c in enumerate(candidates, start=1):
            data[f"inference_{i}"], data[f"candidate_id_{i}"] = f"it is {c}", c
        anns = []
        for who, ratings in by_annotator:
            aid += 1
            anns.append(
                {
                    "id": aid,
                    "completed_by": {"id": aid, "email": who},
                    "was_cancelled": False,
                    "created_at": f"2026-01-01T10:00:{aid:02d}.000000Z",
                    "result": [
                        {
                            "from_name": f"plausibility_{i}",
                            "to_name": "image",
                            "type": "choices",
                            "value": {"choices": [str(r)]},
                        }
                        for i, r in enumerate(ratings, start=1)
                    ],
                }
            )
        out.append({"id": tid, "data": data, "annotations": anns, "predictions": []})
    return out


@given(
    st.lists(
        st.tuples(
            LS_WORD,
            st.lists(LS_WORD, min_size=1, max_size=4, unique=True),
            st.lists(LS_WORD, min_size=1, max_size=3, unique=True),
            st.data(),
        ),
        max_size=3,
    )
)
def test_label_studio_comparison_export_round_trip(spec):
    from squidflow.judgments.label_studio.export import read_comparison_export

    sets, want = [], []
    for qid, candidates, annotators, data in spec:
        anns = [
            (who, data.draw(st.lists(st.integers(1, 3), min_size=len(candidates), max_size=len(candidates))))
            for who in annotators
        ]
        sets.append((qid, candidates, anns))
        want += [
            {"query_id": qid, "candidate_id": c, "annotator": who, "rating": r}
            for who, ratings in anns
            for c, r in zip(candidates, ratings, strict=True)
        ]
    tmp, path = in_tmp("comparison.json", json.dumps(comparison_export(sets)).encode())
    with tmp:
        df, problems, stats = _ls_read("Label Studio comparison export", path, lambda: read_comparison_export(path))
        assert not problems and stats.tasks == len(sets)
        assert df.to_dicts() == want


COMPARISON_EXPORT_SEED = comparison_export(
    [("q1", ["c1", "c2"], [("ann", [1, 3]), ("bob", [2, 2])]), ("q2", ["c9"], [("ann", [3])])]
)


@given(json_mutated(COMPARISON_EXPORT_SEED))
def test_label_studio_comparison_export_mutated(data):
    from squidflow.judgments.label_studio.export import read_comparison_export

    tmp, path = in_tmp("comparison.json", data)
    with tmp:
        out = _ls_read("Label Studio comparison export", path, lambda: read_comparison_export(path, on_error="skip"))
        if out is not None:
            assert out[0]["rating"].is_between(1, 3).all()
        _ls_stop("Label Studio comparison export", path, lambda: read_comparison_export(path))


@given(json_mutated([{"data": t["data"]} for t in RATINGS_SEED]))
def test_label_studio_imported_tasks_json_mutated(data):
    from squidflow.judgments.label_studio.export import expected_images

    tmp, path = in_tmp("tasks.json", data)
    with tmp:
        attempt("Label Studio tasks.json (expected images)", path, lambda: expected_images(path), line=False)


@given(json_mutated(RATINGS_SEED), st.sampled_from(["stop", "skip"]))
def test_label_studio_ingest_exports_mutated(data, on_error):
    """The rule's reader of several exports (A mutated, B well formed, A checked against its tasks.json): judgments in
    their schema with every skipped task in the report, or a UserError naming the file."""
    from squidflow.contracts import schemas
    from squidflow.judgments.label_studio.run_exports import ingest_exports
    from squidflow.judgments.label_studio.tasks import export_from_judgments

    b_rows = [
        {
            "video_id": "v9",
            "frame_index": 1,
            "event_prompt": "a parade",
            "variant": "B",
            "annotator": "carol",
            "position": 0,
            "hit": "B-0",
            "rating": 35,
            "round": 1,
            "source": "label_studio",
        }
    ]
    tmp, path = in_tmp("A.json", data)
    with tmp:
        b, tasks_json = path.with_name("B.json"), path.with_name("tasks.json")
        b.write_text(
            json.dumps(export_from_judgments(pl.DataFrame(b_rows, schema=schemas_judgments()), first_task_id=100))
        )
        tasks_json.write_text(json.dumps([{"data": t["data"]} for t in RATINGS_SEED]))
        out = attempt(
            "Label Studio exports (ingest_judgments)",
            path,
            lambda: ingest_exports(
                [{"path": str(path), "expected": str(tasks_json)}, {"path": str(b)}], on_error=on_error
            ),
            line=False,
        )
        if out is not None:
            judgments, report = out
            assert dict(judgments.schema) == schemas.JUDGMENTS.columns
            assert judgments.filter(pl.col("hit") == "B-0")["rating"].to_list() == [35]  # the good export is read whole
            n_skipped = int(re.search(r"## Skipped tasks: (\d+)", report).group(1))
            assert on_error == "skip" or n_skipped == 0


# --- hostile names and paths: listing, paths built from data, images a page names -----------------------------------
FAIR_NAME = st.sampled_from(["parade", "covid-test", "birthday_party", "HpLQCPkGLhs"])


@given(st.lists(st.tuples(FAIR_NAME | HOSTILE_NAME, FAIR_NAME | HOSTILE_NAME), min_size=1, max_size=4))
def test_listed_events_are_job_safe_or_refused_naming_the_list(pairs):
    """Every event and video id that leaves the listing can name a file and a job; the rest stop naming the list."""
    from squidflow.errors import EmptyError, InputError
    from squidflow.videos.sources import list_candidates
    from squidflow.vocabulary.events import EVENT_ID_MAX

    rows = [{"url": f"https://a.example/{i}.mp4", "event": e, "video_id": v} for i, (e, v) in enumerate(pairs)]
    tmp, path = in_tmp("urls.jsonl", "".join(json.dumps(r) + "\n" for r in rows).encode())
    with tmp:
        try:
            cands, _ = list_candidates([{"type": "urls", "path": str(path)}])
        except (InputError, EmptyError) as exc:
            assert path.name in str(exc), str(exc)
            fuzzed("URL list listing (hostile names)", "stopped with a user error naming the file")
            return
        for col in ("event", "video_id"):
            for v in cands[col]:
                assert re.fullmatch(r"[A-Za-z0-9_\-]+", v) and len(v) <= EVENT_ID_MAX, (col, v)
        fuzzed("URL list listing (hostile names)", "read")


@given(HOSTILE_NAME)
def test_paths_built_from_data_stay_inside_their_folder(name):
    from squidflow.contracts.io import inside

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "results" / "figures"
        try:
            path = inside(folder, f"{name}.png" if name else name, what="event")
        except UserError as exc:
            assert str(folder) in str(exc)
            fuzzed("paths built from data (io.inside)", "stopped with a user error naming the folder")
            return
        assert path.is_relative_to(folder.resolve()) and path != folder.resolve()
        fuzzed("paths built from data (io.inside)", "read")


@given(HOSTILE_NAME)
def test_a_page_inlines_no_image_from_outside_its_root(name):
    from squidflow.report.pages import self_contained

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "work" / "results"
        (root / "annotation").mkdir(parents=True)
        (Path(tmp) / "secret.png").write_bytes(b"SQFSECRET")
        for src in (name, f"../../{name}", f"/{name}", f"{tmp}/secret.png", "../../secret.png"):
            page = '<img src="' + src.replace('"', "&quot;") + '">'
            out, _, _ = self_contained(page, root / "annotation", root=root)
            assert "U1FGU0VDUkVU" not in out  # base64 of the secret's bytes
        fuzzed("task page images (report.pages)", "read")


# --- the polars CSV path against the csv module ---------------------------------------------------------------------
@given(st.lists(st.lists(TEXT | HOSTILE_NAME, min_size=3, max_size=3), min_size=1, max_size=8), st.booleans(),
       st.data())  # fmt: skip
def test_the_polars_csv_path_reads_what_the_csv_module_reads(rows, crlf, data):
    """Where `read_csv_strings` takes polars' reader (files over 1 MB), it must give the csv module's frame, or step
    aside (None) for the csv module to read the file and name a bad line."""
    from squidflow.contracts import io as sio

    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator="\r\n" if crlf else "\n").writerows([["a", "b", "c"], *rows])
    raw = buf.getvalue().encode("utf-8")
    if data.draw(st.booleans()):
        raw = data.draw(mutated(raw))
    tmp, path = in_tmp("big.csv", raw)
    with tmp:
        try:
            slow = sio.read_csv_strings(path, line_column="_line")
        except UserError:
            slow = None
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            fuzzed("CSV, polars path against the csv module", "stopped with a user error naming the file")
            return
        old, sio.FAST_CSV_BYTES = sio.FAST_CSV_BYTES, 0
        try:
            fast = sio._read_csv_fast(text) if text.strip() else None
        finally:
            sio.FAST_CSV_BYTES = old
        if fast is not None:
            assert slow is not None, text
            assert fast.with_columns(pl.int_range(2, fast.height + 2, dtype=pl.Int64).alias("_line")).equals(slow), text
        fuzzed("CSV, polars path against the csv module", "read" if fast is not None else "left to the csv module")


MTURK_CELL = st.sampled_from(["", " ", "W1", "W2", "H1", "H2", "A", "b", "C", "Approved", "Rejected", "vid_1_3",
                              "vid_1_03", "'-vid_2", "v_\u0661", "_5", "x_", "100", "101", "0", "٣", " 7 ", "=1+2",
                              "'=a parade", "a parade"]) | HOSTILE_NAME  # fmt: skip


@given(st.lists(st.lists(MTURK_CELL, min_size=9, max_size=9), min_size=1, max_size=10), st.data())
def test_the_polars_mturk_reader_reads_what_the_row_reader_reads(rows, data):
    """The polars reader (the default) and the row-by-row reader of 0.3.0 give the same judgments, problems and
    rejected counts, on two batch files of one ingestion (a judgment given in both is named with both places)."""
    from helpers.benchmarks import read_mturk_batch_rows

    from squidflow.judgments.ingest import read_mturk_batch

    header = ["HITId", "WorkerId", "AssignmentStatus", "Input.event_prompt", "Input.variant", "Input.image_1_id",
              "Input.image_2_id", "Answer.rating_1", "Answer.rating_2"]  # fmt: skip
    cut = data.draw(st.integers(0, len(rows)))
    with tempfile.TemporaryDirectory() as tmp:
        paths = [Path(tmp) / "a.csv", Path(tmp) / "b.csv"]
        paths[0].write_bytes(csv_bytes(header, rows[:cut]))
        paths[1].write_bytes(csv_bytes(header, rows[cut:]))
        outs = []
        for read in (read_mturk_batch, read_mturk_batch_rows):
            seen: dict = {}
            try:
                outs.append([read(p, on_error="skip", seen=seen) for p in paths])
            except UserError as exc:
                outs.append(str(exc))
        if isinstance(outs[0], str) or isinstance(outs[1], str):
            assert outs[0] == outs[1]
            fuzzed("MTurk batch results, polars against the row reader", "stopped with a user error naming the file")
            return
        for (j1, p1, r1), (j2, p2, r2) in zip(*outs, strict=True):
            assert j1.equals(j2) and p1 == p2 and r1 == r2, (j1, j2, p1, p2)
        fuzzed("MTurk batch results, polars against the row reader", "read")


# --- a published dataset folder someone hands us (squidflow publish check) -----------------------------------------
_PUBLISHED: dict[str, Path] = {}


def _published_seed() -> Path:
    """A small published folder (tests/helpers/publish_run.py's), made once per session, to mutate copies of."""
    if "folder" not in _PUBLISHED:
        from helpers.publish_run import settings, small_run

        from squidflow.publish.dataset import publish

        root = Path(tempfile.mkdtemp(prefix="squidflow-fuzz-publish-"))
        publish(root / "out" / "seed", small_run(root / "run"), settings())
        _PUBLISHED["folder"] = root / "out" / "seed"
    return _PUBLISHED["folder"]


def _check_lines(reader: str, problems) -> None:
    assert isinstance(problems, list) and all(isinstance(p, str) and "\n" not in p for p in problems), problems
    fuzzed(reader, "problems named" if problems else "passes")


@given(st.data())
def test_publish_check_card_mutated(data):
    """A hand-edited card: the check names its problems, one line each, and never fails otherwise."""
    import shutil

    from squidflow.publish.check import check_card

    seed = _published_seed()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "f"
        shutil.copytree(seed, folder)
        card = folder / "README.md"
        card.write_bytes(data.draw(mutated(card.read_bytes()[:1500])))
        _check_lines("published card (squidflow publish check)", check_card(folder)[0])


@given(st.data())
def test_publish_check_croissant_mutated(data):
    """A hand-edited croissant.json: sha256s, RAI fields and mlcroissant's validation, one line per problem."""
    import shutil

    from squidflow.publish import croissant
    from squidflow.publish.check import check_files, check_rai, check_rai_known

    seed = _published_seed()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "f"
        shutil.copytree(seed, folder)
        path = folder / "croissant.json"
        path.write_bytes(data.draw(json_mutated(json.loads(path.read_text()))))
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            meta = None
        problems = croissant.check(path)
        if isinstance(meta, dict):
            problems += check_files(folder, meta) + check_rai(folder, meta) + check_rai_known(folder, meta)
        _check_lines("published croissant.json (squidflow publish check)", problems)


# --- takedown lists (config `takedown`, squidflow.videos.takedown; issue 48) -----------------------------------------
TAKEDOWN_ROWS = st.lists(st.fixed_dictionaries({
    "video_id": WORD, "requested": st.dates().map(lambda d: d.isoformat()).filter(lambda s: len(s) == 10),
    "reason": WORD}), max_size=6)  # fmt: skip
TAKEDOWN_SEED = b"video_id,requested,reason\r\nabc123,2026-11-01,privacy\r\nxyz,2026-10-30,copyright\r\n"


def _read_takedowns(path):
    from squidflow.videos.takedown import read_takedowns

    return read_takedowns(path)


@given(TAKEDOWN_ROWS)
def test_takedown_list_round_trip(rows):
    tmp, path = in_tmp(
        "takedown.csv",
        csv_bytes(["video_id", "requested", "reason"], [[r["video_id"], r["requested"], r["reason"]] for r in rows]),
    )
    with tmp:
        df = attempt("takedown list", path, lambda: _read_takedowns(path))
    if df is None:  # a blank-only cell (a word of format characters) is refused, naming the line
        assert any(not v.strip() for r in rows for v in r.values())
        return
    want, seen = [], set()
    for r in rows:
        if r["video_id"].strip() not in seen:
            seen.add(r["video_id"].strip())
            want.append((r["video_id"].strip(), r["requested"], " ".join(r["reason"].lower().split())))
    assert df.rows() == want


@given(mutated(TAKEDOWN_SEED))
def test_takedown_list_mutated(data):
    tmp, path = in_tmp("takedown.csv", data)
    with tmp:
        attempt("takedown list", path, lambda: _read_takedowns(path))
