"""Errors a person can act on, told apart from bugs.

A `UserError` is a cause the user can fix (a bad config key, a file that is missing or malformed, an input with
nothing usable in it): its message names the file, the row or key, what is wrong and what to do, and that message
is all the user sees — the traceback stays in the rule's log (`squidflow.runtime.logs.setup` installs the hook that does
this). Anything else is a bug: the user sees one line that points at the log, where the traceback is.

An `OSError` that says the disk is full or a path cannot be written is also a cause the user can fix;
`describe_os_error` turns it into a sentence naming the path, the reason and the fix.
"""

from __future__ import annotations

import errno
import os
import re


class UserError(Exception):
    """A cause the user can fix; the message says which file/row/key, what is wrong and how to fix it."""


class InputError(UserError, ValueError):
    """An input file (a URL list, a batch of judgments, a config path) cannot be used as it is."""


class EmptyError(UserError, ValueError):
    """A step has nothing to work on (no ok video, no judgment, no comparison set): said where it happens, with the
    file that tells why. The top-level config key `on_empty: skip` turns the ones that allow it into a note."""


def first_line(exc: BaseException) -> str:
    """An exception's first line for a one-line message, without torchcodec's C++ source location
    ("SingleStreamDecoder, /…/SingleStreamDecoder.cpp:41, "); the exception's type where it says nothing."""
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    return re.sub(r"^.*?\.(?:cpp|h):\d+,\s*", "", line)


WRITE_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT}


def is_user_os_error(exc: BaseException) -> bool:
    """A full disk or an unwritable path (not a bug in squidflow)."""
    return isinstance(exc, OSError) and exc.errno in WRITE_ERRNOS


def describe_os_error(exc: OSError, outputs: tuple[str, ...] = ()) -> str:
    """One sentence: the path, what the system said, and what to do about it.

    An error raised while writing an open file has no file name; `outputs` (the job's) then stand in for it."""
    if exc.filename:
        path = str(exc.filename)
    elif outputs:
        path = outputs[0] + (f" (or another of this job's {len(outputs)} outputs)" if len(outputs) > 1 else "")
    else:
        path = "this job's output"
    first = str(exc.filename or (outputs[0] if outputs else ""))
    folder = os.path.dirname(os.path.abspath(first)) if first else "the output folder"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        what = "no space left on device" if exc.errno == errno.ENOSPC else "disk quota exceeded"
        return (
            f"cannot write {path}: {what} (in {folder}). Free space there (or run with --directory on a bigger "
            "disk), then rerun the same command: finished results are kept, nothing half-written is."
        )
    if exc.errno == errno.EROFS:
        return (
            f"cannot write {path}: read-only file system ({folder}). Remount it read-write, or run in another "
            "working directory with --directory."
        )
    return (
        f"cannot write {path}: permission denied ({folder} is not writable by this user). Make it writable "
        "(chmod -R u+w on it, or ask whoever owns it), or run in another working directory with --directory."
    )


def user_message(exc: BaseException, outputs: tuple[str, ...] = ()) -> str | None:
    """The message to show for a cause the user can fix, or None for a bug (`outputs`: the job's, if known)."""
    if isinstance(exc, UserError):
        return str(exc)
    # ValueErrors named by squidflow modules before UserError existed (SchemaError, JudgmentError) subclass it now;
    # FileNotFoundError from squidflow's readers names the file and the rule that makes it.
    if isinstance(exc, FileNotFoundError):
        return str(exc)
    if is_user_os_error(exc):
        return describe_os_error(exc, outputs)  # type: ignore[arg-type]
    text = str(exc)
    if "No space left on device" in text or "Disk quota exceeded" in text:  # said by a tool squidflow ran (ffmpeg)
        first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
        return (
            f"the disk is full ({first}). Free space there (or run with --directory on a bigger disk), then rerun "
            "the same command: finished results are kept, nothing half-written is."
        )
    return None
