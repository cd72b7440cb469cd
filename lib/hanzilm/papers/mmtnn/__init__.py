"""Pei, Ge & Chang (2014), Max-Margin Tensor Neural Network for Chinese Word Segmentation.

experiment: the chapter config (`configure(profile)` -> MMTNNChapter) and training/scoring through its store;
tables: the chapter's results tables; tagger/viterbi/encoding/tags: the models; crf: the CRF baseline;
pretrain: word2vec character vectors; segmenter + commands: `hanzilm segment`, which decodes with
numpy_tagger (the trained weights in NumPy: no torch import); spec: TaggerSpec, the shape both read.
"""
