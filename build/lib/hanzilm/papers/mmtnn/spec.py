"""The shape of a window tagger (`TaggerSpec`), apart from the torch model so that a saved segmenter can be read
and run without importing torch (`numpy_tagger`, `hanzilm segment`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaggerSpec:
    window: int = 5
    dim: int = 25                # character, tag and bigram embedding size
    hidden: int = 50             # H2
    factors: int = 10            # r
    transitions: bool = False
    tag_embedding: bool = True
    tensor: bool = True
    bigram: bool = False
    kappa: float = 0.2           # structured margin: kappa per wrong tag
    constrain: bool = True       # search only valid BMES sequences

    @property
    def char_features(self) -> int:
        """H1 of the character part: the window's embeddings (and its window - 1 bigram embeddings)."""
        return self.window * self.dim + ((self.window - 1) * self.dim if self.bigram else 0)

    def weight_shapes(self, n_chars: int, n_bigrams: int = 0) -> dict[str, tuple[int, ...]]:
        """The parameters of WindowTagger(self, n_chars, n_bigrams), by state-dict name."""
        d, h, h1, hr = self.dim, self.hidden, self.char_features, self.hidden * self.factors
        shapes: dict[str, tuple[int, ...]] = {"char.weight": (n_chars, d), "w1.weight": (h, h1), "w1.bias": (h,),
                                              "w2.weight": (4, h), "w2.bias": (4,)}
        if self.bigram:
            shapes["bigram.weight"] = (n_bigrams, d)
        if self.tag_embedding:
            shapes.update({"tag.weight": (5, d), "w1_tag.weight": (h, d)})
        if self.tensor:
            shapes.update({"p_char.weight": (hr, h1), "q_char.weight": (hr, h1),
                           "p_tag.weight": (hr, d), "q_tag.weight": (hr, d)})
        if self.transitions:
            shapes["transition"] = (5, 4)
        return shapes
