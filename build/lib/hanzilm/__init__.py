"""hanzilm: an executable companion to three papers on character-level Chinese neural models."""

__version__ = "0.1.0"
