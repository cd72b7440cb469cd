"""Pei, Ge & Chang (2014), Max-Margin Tensor Neural Network for Chinese Word Segmentation.

experiment: the chapter config (`configure(profile)` -> MMTNNChapter) and training/scoring through its store;
tables: the chapter's results tables; tagger/viterbi/encoding/tags: the models; crf: the CRF baseline;
pretrain: word2vec character vectors; segmenter + commands: `hanzilm segment`, which decodes with
numpy_tagger (the trained weights in NumPy: no torch import); spec: TaggerSpec, the shape both read.
"""


def load(name: str = "shipped", **options):
    """A trained segmenter by name (`hanzilm models`) or directory: `load().cut("我爱北京天安门")`. The default is
    the book's cpu PKU model (Table 5's MMTNN with pre-trained character embeddings), shipped with the package."""
    from .commands import segmenter_dir
    from .segmenter import Segmenter

    return Segmenter.load(segmenter_dir(name), **options)
