"""A copy of the checkout as a fresh clone has it, for tests that build, deploy or reformat the repository."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def copy_checkout(dest: Path, *, tag: str | None = None) -> Path:
    """The checkout's tracked and untracked-but-not-ignored files (links kept as links) copied to `dest`; with `tag`,
    committed in a repository of their own and tagged like a release."""
    files = (
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, files):
        src = ROOT / name
        if name == ".venv" or not (src.exists() or src.is_symlink()) or (src.is_dir() and not src.is_symlink()):
            continue  # the shared virtualenv (a link beside the clone), files deleted but not yet committed
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / name, follow_symlinks=False)
    if tag:
        git = ["git", "-C", str(dest), "-c", "user.name=squidflow tests", "-c", "user.email=tests@squidflow.invalid"]
        subprocess.run(["git", "init", "-q", str(dest)], check=True)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", "release"], check=True)
        subprocess.run([*git, "tag", tag], check=True)
    return dest
