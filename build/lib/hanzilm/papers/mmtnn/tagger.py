"""Window taggers for word segmentation (Pei, Ge & Chang 2014), trained max-margin.

One module covers the paper's three neural models:

* NN (Zheng et al. 2013 style): window of character embeddings -> tanh hidden layer -> tag scores, plus a tag
  transition matrix A[prev, cur] (`transitions=True`).
* NN + tag embedding: the previous tag's embedding is part of the input a = [c_{i-2..i+2}; t_{i-1}]
  (`tag_embedding=True`), no transition matrix.
* MMTNN: tag embedding plus the factorised tensor layer (`tensor=True`): z_k = (P_k^T a) . (Q_k a), k = 1..H2
  (each slice V[k] = P[k] Q[k] of rank r), added to the linear layer: h = tanh(W1 a + z + b1) (Eq. 7-10).

Every score depends on the character window and on the previous tag only, so the scores of all previous tags
are computed at once: the character part of W1 a, P a and Q a is computed once per position, the tag part is a
small table per previous tag, and the bilinear form splits into char-char, char-tag and tag-tag terms.
`scores(batch)` returns (B, L, 5, 4): score of tag t at position i given previous tag p (p = 4: START).
Optional bigram features (Table 6): the 4 window bigram embeddings are concatenated to the character part.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn

from .spec import TaggerSpec
from .tags import N_TAGS, START
from .viterbi import viterbi


class WindowTagger(nn.Module):
    def __init__(self, spec: TaggerSpec, n_chars: int, n_bigrams: int = 0, init_scale: float = 0.1):
        super().__init__()
        self.spec = spec
        w, d, h = spec.window, spec.dim, spec.hidden
        self.char = nn.Embedding(n_chars, d)
        nn.init.normal_(self.char.weight, std=init_scale)
        h1 = w * d
        if spec.bigram:
            self.bigram = nn.Embedding(n_bigrams, d)
            nn.init.normal_(self.bigram.weight, std=init_scale)
            h1 += (w - 1) * d
        self.w1 = nn.Linear(h1, h)           # W1 (character part) and b1
        n_prev = 5 if spec.tag_embedding else 1
        if spec.tag_embedding:
            self.tag = nn.Embedding(5, d)    # B M E S START
            nn.init.normal_(self.tag.weight, std=init_scale)
            self.w1_tag = nn.Linear(d, h, bias=False)
        if spec.tensor:
            if not spec.tag_embedding:
                raise ValueError("the tensor layer is defined on [characters; previous tag]")
            r = spec.factors
            self.p_char, self.q_char = nn.Linear(h1, h * r, bias=False), nn.Linear(h1, h * r, bias=False)
            self.p_tag, self.q_tag = nn.Linear(d, h * r, bias=False), nn.Linear(d, h * r, bias=False)
            for lin in (self.p_char, self.q_char, self.p_tag, self.q_tag):
                nn.init.uniform_(lin.weight, -0.1, 0.1)
        self.w2 = nn.Linear(h, N_TAGS)
        if spec.transitions:
            self.transition = nn.Parameter(torch.zeros(5, N_TAGS))
        self.n_prev = n_prev

    # ---- scores ----
    def char_features(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """(B, L, H1) concatenated window embeddings (and window bigram embeddings)."""
        chars = batch["chars"]
        length = chars.shape[1] - 4
        emb = self.char(chars)
        parts = [emb[:, k:k + length] for k in range(self.spec.window)]
        if self.spec.bigram:
            bemb = self.bigram(batch["bigrams"])
            parts += [bemb[:, k:k + length] for k in range(self.spec.window - 1)]
        return torch.cat(parts, dim=-1)

    def scores(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        a = self.char_features(batch)                            # (B, L, H1c)
        nb, length = a.shape[:2]
        pre = self.w1(a).unsqueeze(2)                            # (B, L, 1, H2)
        if self.spec.tag_embedding:
            t = self.tag.weight                                  # (5, d)
            pre = pre + self.w1_tag(t)                           # (B, L, 5, H2)
            if self.spec.tensor:
                h, r = self.spec.hidden, self.spec.factors
                pc = self.p_char(a).view(nb, length, h, r)
                qc = self.q_char(a).view(nb, length, h, r)
                pt = self.p_tag(t).view(5, h, r)
                qt = self.q_tag(t).view(5, h, r)
                # char-tag terms: sum_r (P_c a)_kr (Q_t t)_kr is linear in a, with the matrix
                # M[j, p, k] = sum_r P_c[k, r, j] Q_t[p, k, r] (and the same with P and Q swapped), built from the
                # parameters once per call: one (positions x H1) @ (H1 x 5*H2) product covers every previous tag
                h1 = a.shape[-1]
                pw = self.p_char.weight.view(h, r, h1)
                qw = self.q_char.weight.view(h, r, h1)
                cross = torch.einsum("krj,pkr->jpk", pw, qt) + torch.einsum("krj,pkr->jpk", qw, pt)
                z = ((pc * qc).sum(-1).unsqueeze(2)                                  # char-char
                     + (a.reshape(-1, h1) @ cross.reshape(h1, 5 * h)).view(nb, length, 5, h)
                     + (pt * qt).sum(-1))                                            # tag-tag
                pre = pre + z
        out = self.w2(torch.tanh(pre))                           # (B, L, 5|1, 4)
        if self.spec.transitions:
            out = out + self.transition                          # (B, L, 5, 4)
        elif out.shape[2] == 1:
            out = out.expand(nb, length, 5, N_TAGS)
        return out

    # ---- max-margin training ----
    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Mean over the batch of max(0, max_y [s(y) + Delta(y, gold)] - s(gold)), Delta = kappa * wrong tags."""
        s = self.scores(batch).float()   # under bf16 autocast too: the margins and path sums stay fp32
        gold, lengths = batch["tags"], batch["lengths"]
        valid = gold >= 0
        with torch.no_grad():
            wrong = torch.ones(N_TAGS, N_TAGS) - torch.eye(N_TAGS)              # [gold, cur]
            margin = self.spec.kappa * wrong[gold.clamp(min=0)] * valid.unsqueeze(-1)   # (B, L, 4)
            aug = (s.detach() + margin.unsqueeze(2)).numpy()
            pred, _ = viterbi(aug, lengths.numpy(), constrain=self.spec.constrain)
            pred = torch.from_numpy(pred)
        delta = self.spec.kappa * ((pred != gold) & valid).sum(1).to(s.dtype)
        loss = (path_score(s, pred, valid) + delta - path_score(s, gold, valid)).clamp(min=0)
        return loss.mean()

    def batch_size_units(self, batch: dict[str, torch.Tensor]) -> int:
        return int(batch["lengths"].sum())

    @torch.inference_mode()
    def decode_scores(self, batch: dict[str, np.ndarray | torch.Tensor]) -> np.ndarray:
        """`scores` as float32 NumPy, for the Viterbi search, of `Encoder.arrays(texts)` (NumPy, as
        NumpyTagger takes them) or `Encoder.batch`."""
        return self.scores({name: torch.as_tensor(v) for name, v in batch.items()}).float().numpy()

    def decode(self, batch: dict[str, np.ndarray | torch.Tensor], allowed: np.ndarray | None = None) -> np.ndarray:
        """Best tags of `Encoder.arrays(texts)` or `Encoder.batch`."""
        tags, _ = viterbi(self.decode_scores(batch), np.asarray(batch["lengths"]), constrain=self.spec.constrain,
                          allowed=allowed)
        return tags


def path_score(s: torch.Tensor, tags: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """(B,) sum over positions of s[b, i, tags[i-1], tags[i]] (START before the first), padding excluded."""
    t = tags.clamp(min=0)
    prev = torch.cat([torch.full_like(t[:, :1], START), t[:, :-1]], dim=1)
    picked = s.gather(2, prev[:, :, None, None].expand(-1, -1, 1, N_TAGS)).squeeze(2)   # (B, L, 4)
    picked = picked.gather(2, t.unsqueeze(-1)).squeeze(-1)                               # (B, L)
    return (picked * valid).sum(1)
