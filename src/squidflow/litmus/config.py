"""The litmus stage's config: the `litmus.guesser` keys a guesser run reads (litmus test §4.2), without importing
torch, so the rules file builds the run's params from these fields (`config_fields`) and the schema keeps the defaults."""

from __future__ import annotations

from dataclasses import dataclass

from squidflow.config.validation import defaults_from_schema


@dataclass(frozen=True)
@defaults_from_schema("litmus.guesser")
class GuesserConfig:
    """Hyperparameters of the first-turn guesser (config section litmus.guesser; defaults are the schema's)."""

    epochs: int
    batch_size: int
    lr: float
    word_dim: int
    hidden_dim: int
    category_dim: int
    target_weight: float
    min_word_count: int
