"""Every chapter's models at the `paper` sizes (which the `gpu` profile shares, tests/test_plan.py), built the
way the chapter builds them, with the parameter counts the plan prints, and two optimiser steps of the chapter's
own training config through the one trainer on a tiny slice of the real data, on the CPU: the path a GPU run
takes, minus the device. (Word2vec initialisation only sets embedding values and is left out.)"""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from hanzilm.train import train

pytestmark = pytest.mark.usefixtures("real_mirror")
PROFILE = "paper"


@pytest.fixture(autouse=True)
def _quiet_single_thread(monkeypatch):
    # one thread: on a busy 2-core machine a second OpenMP thread turns a millisecond backward into seconds
    monkeypatch.setenv("HANZILM_PROGRESS", "0")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def ch_profile():
    from hanzilm.profiles import get_profile

    return get_profile(PROFILE)


def two_steps(model: torch.nn.Module, tcfg, batches, run_dir) -> list[str]:
    """Two steps of `tcfg` (its optimiser, schedule, clipping): they run, stay finite and move the weights;
    returns the names of the tensors that moved."""
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    cfg = dataclasses.replace(tcfg, steps=2, eval_every=0, checkpoint_every=0, log_every=1)
    result = train(model, cfg, batches, None, run_dir, device="cpu")
    assert result.steps == 2 and result.nonfinite == 0
    assert all(math.isfinite(r["loss"]) for r in result.history if "loss" in r)
    moved = [k for k, v in model.state_dict().items() if not torch.equal(v, before[k])]
    assert moved, "no parameter changed"
    return moved


def test_backpack_pair_at_paper_size(tmp_path):
    from hanzilm.papers.backpack import experiment as ex
    from hanzilm.papers.backpack import plan
    from hanzilm.papers.backpack.data import BlockBatches

    ch = ex.configure(PROFILE)
    corpus = ex.load_corpus(ch)
    planned = {m.name: m for m in plan.plan(ch_profile()).models}
    for name, cfg in ch.lm.pair().items():
        torch.manual_seed(0)
        model = ex.build(cfg, len(corpus.vocab))
        assert (cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.n_senses, cfg.block_size) == (6, 6, 384, 16, 1024)
        assert sum(p.numel() for p in model.parameters()) == planned[name].params
        # two blocks of 32 characters from the training split; the model keeps its 1,024 positions
        moved = two_steps(model, cfg.train, BlockBatches(corpus.splits["train"], 2, 32, seed=0), tmp_path / name)
        assert "wte.weight" in moved


@pytest.mark.parametrize("corpus", ["pku", "ptb"])
def test_segmental_lms_at_paper_size(tmp_path, corpus):
    from hanzilm.papers.mslm import experiment as ex
    from hanzilm.papers.mslm import plan
    from hanzilm.papers.mslm.data import CharBatches
    from hanzilm.papers.mslm.model import SegmentalLM

    ch = ex.configure(PROFILE)
    planned = {m.name: m for m in plan.plan(ch_profile()).models}
    for encoder in ("rslm", "mslm", "dmslm"):
        exp = ex.slm_experiment(ch, corpus, encoder)
        assert exp.model.dim == 256 and exp.batch_chars == 8192
        data = ex.load_data(corpus, exp.train_sentences)
        torch.manual_seed(0)
        model = SegmentalLM(exp.model, len(data.vocab))
        assert sum(p.numel() for p in model.parameters()) == planned[f"{corpus}/{encoder}"].params
        rows = data.encode(data.train[:6])
        two_steps(model, exp.train, CharBatches(rows, 200, seed=0), tmp_path / encoder)


def test_mmtnn_models_at_paper_size(tmp_path):
    from hanzilm.papers.mmtnn import experiment as ex
    from hanzilm.papers.mmtnn import plan
    from hanzilm.papers.mmtnn.crf import CRFSegmenter, CRFSpec, train_crf
    from hanzilm.papers.mmtnn.encoding import Encoder

    ch = ex.configure(PROFILE)
    planned = {m.name: m for m in plan.plan(ch_profile()).models}
    archs = {(c.dataset, plan.architecture(c)): c for c in ex.runs(ch)}
    assert {a for _, a in archs} == {"crf", "nn", "nn_tag", "mmtnn", "mmtnn+bigram"}
    for (dataset, arch), cfg in archs.items():
        train_s, _ = ex.split_sentences(cfg)
        if arch == "crf":
            path = tmp_path / "crf.crfsuite"
            train_crf(train_s[:20], CRFSpec(c2=cfg.crf_c2, max_iterations=2), path)
            assert len(CRFSegmenter(path).segment_lines(["我爱北京天安门"])) == 1
            continue
        encoder = Encoder.build(["".join(s) for s in train_s], min_freq=cfg.char_min_freq, bigrams=cfg.bigram,
                                bigram_min_freq=cfg.bigram_min_freq)
        torch.manual_seed(0)
        model = ex.build_model(cfg, encoder)
        assert (cfg.window, cfg.dim, cfg.hidden, cfg.factors) == (5, 25, 50, 10)
        assert sum(p.numel() for p in model.parameters()) == planned[f"{dataset}/{arch}"].params
        small = dataclasses.replace(cfg, batch_size=2)   # two batches of two sentences
        two_steps(model, ex.train_config(small, 4), ex._batches(small, encoder, train_s[:4]),
                  tmp_path / f"{dataset}-{arch}")
