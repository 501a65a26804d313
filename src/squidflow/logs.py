"""Logging for rule scripts: everything a script says goes to the rule's `log:` file, so a failed job explains itself.

When a job fails, the person running the workflow sees one line on the console: the message of an error they can fix
(`squidflow.errors.UserError`, a full disk, an unwritable path), or for a bug the exception and where its traceback
is. The traceback itself goes to the rule's log only.
"""

from __future__ import annotations

import contextlib
import io
import logging
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path

from squidflow import paths
from squidflow.errors import user_message


def _console():
    """The stream Snakemake shows the user (stderr before `setup` sent it to the log)."""
    return sys.__stderr__ or sys.stderr


def install_excepthook(rule: str = "", log_path: str | None = None, outputs: tuple[str, ...] = ()) -> None:
    """On an uncaught exception: the traceback to the log (sys.stderr), one line to the console, exit status 1."""

    def hook(exc_type, exc, tb) -> None:
        where = f"rule {rule}" if rule else "squidflow"
        text = "".join(traceback.format_exception(exc_type, exc, tb))
        message = user_message(exc, outputs)
        log_failed = getattr(sys.stderr, "failed", False)  # a LogStream that could not write its file
        log_hint = (
            " (traceback above: its log could not be written)"
            if log_failed
            else f" (traceback in {log_path})"
            if log_path
            else ""
        )
        if message is None:
            line = (
                f"{where} failed with a bug, {exc_type.__name__}: {exc}{log_hint}. Please report it with that "
                f"{'traceback' if log_failed else 'log'}."
            )
        else:
            line = f"{where}: {message}"
        if sys.stderr is not _console():
            sys.stderr.write(text)
            if not log_failed:  # else it is the console, which gets the line below
                sys.stderr.write(f"ERROR {line}\n")
            sys.stderr.flush()
        console = _console()
        if console is not None:
            console.write(f"\nsquidflow error: {line}\n")
            console.flush()

    sys.excepthook = hook


class LogStream(io.TextIOBase):
    """A rule's log file that, once writing to it fails (a full disk under `logs/`, a quota), says so once on the
    console, naming the file and the error, and goes on to the console: a job whose log cannot be written still
    writes its outputs, and the person running it sees why the log is empty (issue 31: it was silent)."""

    def __init__(self, stream, path: Path) -> None:
        super().__init__()
        self._stream, self._path, self._failed = stream, path, False

    def _to_console(self, error: OSError) -> None:
        self._failed = True
        reason = error.strerror or str(error)
        try:
            self._stream.close()
        except OSError:  # its buffer cannot be written either: closing still frees the file
            pass
        console = _console()
        if console is not None:
            console.write(
                f"squidflow warning: cannot write the log {self._path} ({reason}); this job's log goes to "
                "the console from here\n"
            )
            console.flush()

    def write(self, text: str) -> int:
        if not self._failed:
            try:
                n = self._stream.write(text)
                self._stream.flush()  # a failure shows now, while the text can still go to the console
                return n
            except OSError as error:
                self._to_console(error)
        console = _console()
        return console.write(text) if console is not None else len(text)

    def flush(self) -> None:
        if not self._failed:
            try:
                self._stream.flush()
            except OSError as error:
                self._to_console(error)
        elif (console := _console()) is not None:
            console.flush()

    @property
    def failed(self) -> bool:
        """Writing the log failed: what follows goes to the console."""
        return self._failed

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        """The log's descriptor (for faulthandler and the like), the console's once the log failed."""
        return (_console() if self._failed else self._stream).fileno()

    def writable(self) -> bool:
        return True


def setup(snakemake_obj=None, *, level: int = logging.INFO) -> logging.Logger:
    """Send logging and stderr (tracebacks, tqdm) of a rule script to its log file; return the `squidflow` logger.

    Also installs the hook that shows an uncaught error as one line on the console (see the module docstring).
    """
    log_files = list(getattr(snakemake_obj, "log", []) or []) if snakemake_obj is not None else []
    handlers: list[logging.Handler] = []
    log_path = None
    if log_files:
        path = Path(log_files[0])
        path.parent.mkdir(parents=True, exist_ok=True)
        stream = LogStream(open(path, "a", buffering=1, encoding="utf-8"), path)  # noqa: SIM115 - lives as long as the job
        sys.stderr = stream
        handlers.append(logging.StreamHandler(stream))
        log_path = str(path)
        paths.set_job_root(log_path)
    else:
        handlers.append(logging.StreamHandler(sys.stderr))
    for handler in handlers:
        handler.addFilter(_redact_record)
    logging.basicConfig(
        level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", handlers=handlers, force=True
    )
    rule = str(getattr(snakemake_obj, "rule", "") or "") if snakemake_obj is not None else ""
    outputs = tuple(map(str, getattr(snakemake_obj, "output", []) or [])) if snakemake_obj is not None else ()
    install_excepthook(rule, log_path, outputs)
    _exit_cleanly_on_sigterm()
    return logging.getLogger("squidflow")


@contextlib.contextmanager
def log_to(path: str | Path) -> Iterator[None]:
    """For the block, logging and stderr go to `path` (appended) instead of the job's first log: a job that does
    several runs (rule train_<experiment>) gives each run its own log, at the path a one-run job would write."""
    root = logging.getLogger()
    previous_handlers, previous_stderr = root.handlers[:], sys.stderr
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", buffering=1, encoding="utf-8") as file:
        stream = LogStream(file, path)  # a full disk under logs/ says so on the console, as for the job's first log
        handler = logging.StreamHandler(stream)
        handler.addFilter(_redact_record)
        if previous_handlers:
            handler.setFormatter(previous_handlers[0].formatter)
        root.handlers[:] = [handler]
        sys.stderr = stream
        try:
            yield
        finally:
            root.handlers[:] = previous_handlers
            sys.stderr = previous_stderr


def _redact_record(record: logging.LogRecord) -> bool:
    """A log record with the password of any URL in it (a proxy's) replaced by `***`."""
    from squidflow.fetch import redact_url_credentials

    message = record.getMessage()
    clean = redact_url_credentials(message)
    if clean != message:
        record.msg, record.args = clean, None
    return True


def _exit_cleanly_on_sigterm() -> None:
    """A job its scheduler stops (`scancel`, a time limit, Ctrl-C of snakemake) gets SIGTERM first: leave through
    Python's cleanup, so `io.atomic_path` removes its half-written temporary file, instead of dying on the spot."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def progress(iterable=None, *, desc: str, unit: str = "it", total: int | None = None, **kwargs):
    """A tqdm progress bar for a long loop: items done, items per second and time left, in the rule's log.

    It writes to the current stderr, which `setup` has sent to the rule's log, so Snakemake's own output is not
    flooded. Into a log file (not a terminal) it refreshes at most every 10 s, so a job of hours leaves a log a
    person can still read."""
    from tqdm import tqdm

    to_file = not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty())
    kwargs.setdefault("mininterval", 10.0 if to_file else 0.5)
    kwargs.setdefault("file", sys.stderr)
    return tqdm(iterable, desc=desc, unit=unit, total=total, **kwargs)
