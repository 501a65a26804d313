"""A free TCP port on 127.0.0.1 for the local servers the tests start (moto's S3, Label Studio, the Slurm cluster)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port the kernel has just handed out and released: free now (a server binds it right after)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
