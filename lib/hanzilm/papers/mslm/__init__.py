"""Downey et al. (2021), A Masked Segmental Language Model for Unsupervised Natural Language Segmentation."""
