"""CLIP (`load_clip`): an open_clip model, its eval transform and tokenizer, for the comparison stage's `clip` scorer
(Sherlock §5) and the evaluation stage's zero-shot predictions (SQUID-E §5.2). Weights that cannot be had raise
`ClipWeightsUnavailable` naming the config key and the way out.

Kept apart from `squidflow.encoders.pretrained` (the image backbones) so that a rule scoring with CLIP needs open_clip in its
environment and not timm, and a rule featurizing frames needs timm and not open_clip.
"""

from __future__ import annotations


class ClipWeightsUnavailable(RuntimeError):
    """open_clip could not load the configured model/pretrained weights (offline, or a wrong tag)."""


def load_clip(
    model_name: str,
    pretrained: str | None,
    *,
    cache_dir: str | None = None,
    device: str = "cpu",
    config_key: str = "comparison.clip",
    alternative: str = "use comparison.scorer: text (image-free) or probe",
):
    """open_clip model, eval transform and tokenizer; a clear error when the weights cannot be had.

    `config_key` is the config section that chose the model (named in the error), `alternative` what else to do;
    `pretrained` None gives a randomly initialised model (tests).
    """
    try:
        import open_clip
    except ImportError as exc:
        raise ClipWeightsUnavailable(f"{config_key}: CLIP needs open_clip (pip install open-clip-torch)") from exc
    try:
        model, _, preprocess = open_clip.create_model_and_transforms(
            model_name, pretrained=pretrained, cache_dir=cache_dir, device=device
        )
    except Exception as exc:  # network errors, missing files, unknown tags all surface here
        raise ClipWeightsUnavailable(
            f"{config_key}: cannot load open_clip model {model_name!r} with pretrained weights {pretrained!r} "
            f"(cache dir: {cache_dir or '~/.cache (open_clip default)'}): {type(exc).__name__}: {exc}. "
            f"Download the weights once on a machine with internet (they are cached there), point {config_key}."
            f"cache_dir at that cache or {config_key}.pretrained at a local checkpoint file, or {alternative}."
        ) from exc
    model.eval()
    return model, preprocess, open_clip.get_tokenizer(model_name)
