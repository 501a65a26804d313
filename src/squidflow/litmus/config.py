"""The litmus stage's config: the `litmus.guesser` keys a guesser run reads (litmus test §4.2), without importing
torch, so the rules file builds the run's params from these fields (`config_fields`) and the schema keeps the defaults."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GuesserConfig:
    """Hyperparameters of the first-turn guesser (config section litmus.guesser; defaults are the schema's)."""

    epochs: int = 20
    batch_size: int = 64
    lr: float = 1.0e-3
    word_dim: int = 64
    hidden_dim: int = 128
    category_dim: int = 32
    target_weight: float = 0.0
    min_word_count: int = 1
