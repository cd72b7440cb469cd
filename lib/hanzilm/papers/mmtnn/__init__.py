"""Pei, Ge & Chang (2014), Max-Margin Tensor Neural Network for Chinese Word Segmentation."""
