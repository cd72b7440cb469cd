"""The segmental-LM chapter (Downey et al. 2021): data batching, evaluation metrics, experiments.

The model is `hanzilm.models.slm`, the lattice `hanzilm.segment.lattice`."""
