"""squidflow: ambiguous images with human judgments, from internet videos to calibration tables."""

from squidflow.version import __version__

__all__ = ["__version__"]
