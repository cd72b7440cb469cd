"""The segmental LMs' trained models by name for `hanzilm models`: pku-mslm-s0, ptb-rslm-s0, ..."""

from __future__ import annotations


def slm_name(config: dict) -> str:
    return f"{config.get('corpus')}-{(config.get('model') or {}).get('encoder')}-s{(config.get('train') or {}).get('seed', 0)}"


MODEL_NAMES = {"SLMExperiment": ("mslm", slm_name)}
