"""Chinese word segmentation (Pei, Ge & Chang 2014): BMES tags, batched Viterbi, the segmenter and its training."""
