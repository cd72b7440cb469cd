"""Downey et al. (2021), A Masked Segmental Language Model for Unsupervised Natural Language Segmentation.

`model` (the three encoders and the segment decoder) and `lattice` (the marginal over segmentations, Viterbi);
`data` (character batches) and `metrics` (word F1, boundary P/R/F1/MCC); `experiment`: the chapter config
(`configure`), one run through the model store and the grid of Table 2's runs; `tables`: what the notebooks
write and show."""
