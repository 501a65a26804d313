"""squidflow: ambiguous images with human judgments, from internet videos to calibration tables."""

__version__ = "0.1.0"
