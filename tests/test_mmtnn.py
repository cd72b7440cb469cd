"""The window taggers: Viterbi against brute force, loss-augmented decoding, the factorised tensor layer against
the paper's formula, the max-margin loss and a tiny end-to-end fit."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from hanzilm.errors import HanzilmError
from hanzilm.papers.mmtnn.tagger import TaggerSpec, WindowTagger, path_score
from hanzilm.papers.mmtnn.encoding import Encoder
from hanzilm.papers.mmtnn.tags import START, VALID, VALID_END, tags_to_words, words_to_tags
from hanzilm.papers.mmtnn.viterbi import path_scores, viterbi


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: extra threads only spin on a shared machine
    yield
    torch.set_num_threads(threads)


def _brute(scores: np.ndarray, n: int, constrain: bool, allowed=None):
    best, arg = -np.inf, None
    for seq in itertools.product(range(4), repeat=n):
        prev, total, ok = START, 0.0, True
        for i, t in enumerate(seq):
            if constrain and not VALID[prev, t] or allowed is not None and not allowed[i, t]:
                ok = False
                break
            total += scores[i, prev, t]
            prev = t
        if ok and constrain and not VALID_END[prev]:
            ok = False
        if ok and total > best:
            best, arg = total, seq
    return best, arg


@pytest.mark.parametrize("constrain", [True, False])
def test_viterbi_matches_brute_force(constrain):
    rng = np.random.default_rng(0)
    lengths = np.array([1, 2, 3, 5, 4, 0])
    scores = rng.normal(size=(len(lengths), 5, 5, 4)).astype(np.float32)
    tags, totals = viterbi(scores, lengths, constrain=constrain)
    for b, n in enumerate(lengths):
        if n == 0:
            assert (tags[b] == -1).all()
            continue
        best, seq = _brute(scores[b], n, constrain)
        assert tuple(tags[b, :n]) == seq
        assert (tags[b, n:] == -1).all()
        assert totals[b] == pytest.approx(best, abs=1e-4)
        assert path_scores(scores[b:b + 1], tags[b:b + 1], lengths[b:b + 1])[0] == pytest.approx(best, abs=1e-4)


def test_viterbi_breaks_ties_as_argmax_does():
    """The search takes its max over previous tags by pairs: on a tie it keeps the first previous tag, as
    argmax, so the decoded paths of the stored models are those of the plain recursion below."""
    rng = np.random.default_rng(2)
    lengths = np.array([7, 3, 1, 6])
    scores = rng.integers(-1, 2, size=(len(lengths), 7, 5, 4)).astype(np.float32)   # ties everywhere
    trans = np.where(VALID, 0.0, -1e9).astype(np.float32)
    tags, _ = viterbi(scores, lengths)
    for b, n in enumerate(lengths):
        delta, back = scores[b, 0, START] + trans[START], []
        for i in range(1, n):
            cand = delta[:, None] + scores[b, i, :4] + trans[:4]
            back.append(cand.argmax(axis=0))
            delta = cand.max(axis=0)
        path = [int((delta + np.where(VALID_END, 0.0, -1e9)).argmax())]
        for bp in reversed(back):
            path.insert(0, int(bp[path[0]]))
        assert tags[b, :n].tolist() == path


def test_viterbi_allowed_mask_and_loss_augmentation():
    rng = np.random.default_rng(1)
    scores = rng.normal(size=(1, 4, 5, 4)).astype(np.float32)
    allowed = np.ones((1, 4, 4), dtype=bool)
    allowed[0, 1:3] = False
    allowed[0, 1, 0] = True   # position 1 must be B, position 2 M or E
    allowed[0, 2, [1, 2]] = True
    tags, total = viterbi(scores, np.array([4]), allowed=allowed)
    assert total[0] == pytest.approx(_brute(scores[0], 4, True, allowed[0])[0], abs=1e-4)
    assert tags[0, 1] == 0 and tags[0, 2] in (1, 2)
    # loss augmentation: a huge margin on every wrong tag makes the search avoid the gold sequence entirely
    gold = np.array([3, 0, 2, 3])
    aug = scores.copy()
    for i, g in enumerate(gold):
        aug[0, i, :, [t for t in range(4) if t != g]] += 100.0
    tags, _ = viterbi(aug, np.array([4]))
    assert all(t != g for t, g in zip(tags[0], gold))


def test_tags_round_trip_and_robust_words():
    words = ["中国", "人民", "的", "好朋友"]
    tags = words_to_tags(words)
    assert tags == [0, 2, 0, 2, 3, 0, 1, 2]
    assert tags_to_words("".join(words), tags) == words
    assert tags_to_words("abc", [0, 3, 1]) == ["a", "b", "c"]  # invalid sequences still give words
    assert tags_to_words("", []) == []


def _naive_scores(model: WindowTagger, batch) -> torch.Tensor:
    """The paper's equations position by position: a = [window embeddings; previous tag], z_k = a^T P_k Q_k a."""
    spec = model.spec
    h, r = spec.hidden, spec.factors
    chars, n = batch["chars"][0], int(batch["lengths"][0])
    d = spec.dim
    h1c = spec.window * d
    # full P_k (H1 x r) and Q_k (r x H1) over [chars; tag]
    p_full = torch.cat([model.p_char.weight.view(h, r, h1c), model.p_tag.weight.view(h, r, d)], dim=2)
    q_full = torch.cat([model.q_char.weight.view(h, r, h1c), model.q_tag.weight.view(h, r, d)], dim=2)
    w1 = torch.cat([model.w1.weight, model.w1_tag.weight], dim=1)
    out = torch.zeros(n, 5, 4)
    for i in range(n):
        window = model.char(chars[i:i + spec.window]).reshape(-1)
        for p in range(5):
            a = torch.cat([window, model.tag.weight[p]])
            z = torch.stack([(p_full[k] @ a) @ (q_full[k] @ a) for k in range(h)])
            hidden = torch.tanh(w1 @ a + z + model.w1.bias)
            out[i, p] = model.w2(hidden)
    return out


def test_factorised_tensor_layer_matches_the_formula():
    torch.manual_seed(0)
    spec = TaggerSpec(dim=4, hidden=6, factors=3)
    model = WindowTagger(spec, n_chars=10)
    batch = {"chars": torch.tensor([[1, 1, 3, 4, 5, 2, 2]]), "lengths": torch.tensor([3])}
    with torch.no_grad():
        fast = model.scores(batch)[0]
        slow = _naive_scores(model, batch)
    assert torch.allclose(fast, slow, atol=1e-5)


def _encoder():
    return Encoder.build(["我爱北京天安门", "天安门上太阳升", "北京欢迎你"], min_freq=1, bigrams=True, bigram_min_freq=1)


@pytest.mark.parametrize("model_kind", ["nn", "nn_tag", "mmtnn", "mmtnn_bigram"])
def test_loss_is_the_structured_hinge_and_learns(model_kind):
    torch.manual_seed(0)
    flags = {"nn": dict(transitions=True, tag_embedding=False, tensor=False),
             "nn_tag": dict(tag_embedding=True, tensor=False), "mmtnn": {},
             "mmtnn_bigram": dict(bigram=True)}[model_kind]
    spec = TaggerSpec(dim=8, hidden=16, factors=4, **flags)
    enc = _encoder()
    model = WindowTagger(spec, len(enc.vocab), enc.n_bigrams)
    sentences = [["我", "爱", "北京", "天安门"], ["天安门", "上", "太阳", "升"], ["北京", "欢迎", "你"]]
    batch = enc.batch_words(sentences)
    # the loss equals max_y [s(y) + Delta] - s(gold) computed by brute force on the first sentence
    with torch.no_grad():
        s = model.scores(batch)
        gold = batch["tags"][:1]
        n = int(batch["lengths"][0])
        aug = s[0, :n].clone()
        for i in range(n):
            aug[i, :, [t for t in range(4) if t != gold[0, i]]] += spec.kappa
        best, _ = _brute(aug.numpy(), n, True)
        want = best - float(path_score(s[:1, :n], gold[:, :n], gold[:, :n] >= 0)[0])
        got = float(model.loss({k: v[:1, :(n + 4 if k == "chars" else n + 3 if k == "bigrams" else n)]
                                if v.dim() > 1 else v[:1] for k, v in batch.items()}))
    assert got == pytest.approx(max(want, 0.0), abs=1e-4)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.2)
    for _ in range(60):
        opt.zero_grad()
        loss = model.loss(batch)
        loss.backward()
        opt.step()
    assert float(model.loss(batch).detach()) < 1e-3
    pred = model.decode(batch)
    assert (pred == batch["tags"].numpy()).all()


def test_encoder_windows_bigrams_and_persistence(tmp_path):
    enc = Encoder.build(["我爱北京", "北京1998"], min_freq=1, bigrams=True, bigram_min_freq=1)
    batch = enc.batch(["我爱", "北京1"])
    ids = batch["chars"]
    assert ids.shape == (2, 3 + 4) and batch["lengths"].tolist() == [2, 3]
    assert ids[0, :2].tolist() == [enc.start, enc.start] and ids[0, 4:6].tolist() == [enc.end, enc.end]
    # half-width digits are looked up as the full-width characters of the training text
    assert enc.vocab.itos[int(ids[1, 4])] == "１"
    assert enc.bigrams[int(batch["bigrams"][0, 2])] == "我爱"
    enc.save(tmp_path)
    again = Encoder.load(tmp_path)
    assert again.vocab == enc.vocab and again.bigrams == enc.bigrams


def test_bigram_embeddings_start_as_the_mean_of_their_characters():
    from hanzilm.papers.mmtnn.experiment import SegmentationConfig, build_model

    enc = Encoder.build(["我爱北京", "北京欢迎你"], min_freq=1, bigrams=True, bigram_min_freq=1)
    cfg = SegmentationConfig(model="mmtnn", bigram=True, dim=6, hidden=8, factors=2)
    torch.manual_seed(0)
    model = build_model(cfg, enc)
    j = enc.bigrams.index("北京")
    want = (model.char.weight[enc.vocab.stoi["北"]] + model.char.weight[enc.vocab.stoi["京"]]) / 2
    assert torch.allclose(model.bigram.weight[j], want)


def test_pretrained_rows_and_nearest_neighbours():
    from hanzilm.papers.mmtnn.pretrain import init_table, nearest

    itos = ["<unk>", "一", "二", "王", "，"]
    table = torch.zeros(5, 2)
    vectors = {"一": np.array([1.0, 0.0]), "二": np.array([1.1, 0.0]), "王": np.array([-1.0, 1.0])}
    assert init_table(itos, vectors, table, std=0.1) == 3
    assert table[4].abs().sum() == 0 and table[1, 0] > 0
    assert [c for c, _ in nearest(table, itos, "一", k=2)] == ["二", "，"]  # specials are never neighbours


def test_pretrained_vectors_initialise_the_lookup_table():
    from hanzilm.papers.mmtnn.experiment import SegmentationConfig, build_model

    enc = Encoder.build(["我爱北京"], min_freq=1)
    cfg = SegmentationConfig(model="nn", pretrained=True, dim=2, hidden=4)
    torch.manual_seed(0)
    model = build_model(cfg, enc, {"北": np.array([3.0, 0.0]), "京": np.array([-3.0, 0.0])})
    north, capital = model.char.weight[enc.vocab.stoi["北"]], model.char.weight[enc.vocab.stoi["京"]]
    assert torch.allclose(north, -capital) and north[0] > 0 and north[1] == 0


# ---- the chapter config and its store ----

def test_under_bf16_autocast_the_hinge_is_fp32_arithmetic_on_bf16_products():
    from hanzilm.papers.mmtnn.experiment import SegmentationConfig, train_config

    torch.manual_seed(0)
    enc = _encoder()
    model = WindowTagger(TaggerSpec(dim=8, hidden=16, factors=4, bigram=True), len(enc.vocab), enc.n_bigrams)
    batch = enc.batch_words([["我", "爱", "北京", "天安门"], ["北京", "欢迎", "你"]])
    exact = model.loss(batch)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        fast = model.loss(batch)
        assert model.scores(batch).dtype == torch.bfloat16     # the products are bf16 ...
    assert fast.dtype == torch.float32                          # ... the margins and path sums are not
    assert float(fast) == pytest.approx(float(exact), rel=0.02)
    fast.backward()
    assert all(p.grad is None or torch.isfinite(p.grad).all() for p in model.parameters())
    assert train_config(SegmentationConfig(precision="bf16"), 100).precision == "bf16"
    assert train_config(SegmentationConfig(), 100).precision == "fp32"


def test_chapter_config_composes_the_profile():
    import dataclasses

    from hanzilm.errors import HanzilmError
    from hanzilm.papers.mmtnn.experiment import MMTNNChapter, SegmentationConfig, configure
    from hanzilm.papers.mmtnn.pretrain import Word2VecConfig
    from hanzilm.store import Store

    ch = configure("smoke")
    assert ch.store == Store.of("smoke") and ch.test_lines == 100
    assert (ch.segmenter.train_sentences, ch.segmenter.epochs, ch.segmenter.crf_max_iterations) == (300, 1, 5)
    assert (ch.word2vec.max_chars, ch.word2vec.epochs, ch.word2vec.dim) == (100_000, 1, 25)
    cpu = configure("cpu")
    assert cpu.test_lines is None and cpu.segmenter.train_sentences is None
    assert (cpu.segmenter.epochs, cpu.segmenter.patience, cpu.workers) == (30, 3, 2)
    assert set(cpu.lr_grid) == {"nn", "nn_tag", "mmtnn"} and cpu.word2vec.max_chars is None
    # the paper profile is the paper: no overrides
    paper = configure("paper")
    assert (paper.segmenter, paper.word2vec, paper.test_lines) == (SegmentationConfig(), Word2VecConfig(), None)
    assert paper == MMTNNChapter()  # the store does not take part in comparisons
    # one model: the shared settings with its variant set last
    cfg = ch.model(dataset="msr", model="nn", pretrained=True)
    assert cfg == dataclasses.replace(ch.segmenter, dataset="msr", model="nn", pretrained=True, bigram=False)
    # a chosen learning rate serves its family on both datasets and with bigrams, not the other families
    chosen = dataclasses.replace(ch, lrs={"mmtnn+pre": 0.1})
    assert chosen.model(dataset="msr", model="mmtnn", pretrained=True, bigram=True).lr == 0.1
    assert chosen.model(dataset="pku", model="mmtnn").lr == ch.segmenter.lr
    with pytest.raises(HanzilmError, match="model one of"):
        ch.model(dataset="pku", model="lstm")


def test_pretrained_models_are_keyed_by_the_word2vec_config(real_mirror, tmp_path):
    import dataclasses
    import json

    from hanzilm.papers.mmtnn import experiment as ex
    from hanzilm.store import Store

    from hanzilm.keys import key_fields

    ch = dataclasses.replace(ex.configure("smoke"), store=Store(tmp_path))
    other = dataclasses.replace(ch, word2vec=dataclasses.replace(ch.word2vec, epochs=2))
    plain, pre = ch.model(dataset="pku", model="mmtnn"), ch.model(dataset="pku", model="mmtnn", pretrained=True)
    assert ex.run_dir(ch, plain) == ex.run_dir(other, plain)
    assert ex.run_dir(ch, pre) != ex.run_dir(other, pre)
    assert json.loads(ex._data_key(ch, pre)["word2vec"]) == key_fields(ch.word2vec)  # its non-default fields
    assert "until_stable" not in key_fields(ch.word2vec) and "epochs" in key_fields(other.word2vec)
    assert ex.segmenter_path(ch, pre) == tmp_path / ex.run_dir(ch, pre).name / "segmenter"


def test_crf_is_made_once_in_the_store(tmp_path, monkeypatch):
    import dataclasses

    from hanzilm import versions
    from hanzilm.papers.mmtnn import experiment as ex
    from hanzilm.store import Store, load_summary

    words = [["我们", "在", "北京", "工作", "。"], ["今天", "北京", "天气", "很", "好", "。"]]
    monkeypatch.setattr(ex, "split_sentences", lambda cfg: (words * 5, words))
    monkeypatch.setattr(ex, "_data_key", lambda ch, cfg: {"toy": "0"})
    ch = dataclasses.replace(ex.configure("smoke"), store=Store(tmp_path))
    cfg = ch.model(dataset="pku", model="crf")
    first = ex.get_segmenter(ch, cfg)
    run = ch.store.run_dir(cfg, data={"toy": "0"}, version=versions.key("mmtnn"))
    assert (run / "crf.crfsuite").is_file()
    assert load_summary(run)["best_metrics"]["dev_f1"] == pytest.approx(
        ex.dev_metrics(first, words)["dev_f1"])

    def fail(*args, **kwargs):
        raise AssertionError("the stored CRF was trained again")

    monkeypatch.setattr(ex, "train_crf", fail)
    again = ex.get_segmenter(ch, cfg)
    assert again.segment_lines(["今天北京很好。"]) == first.segment_lines(["今天北京很好。"])


def test_gains_by_seed_take_the_weakest_of_several_better_models():
    import pandas as pd

    from hanzilm.papers.mmtnn import tables

    f1 = {("CRF", 0): 88.0, ("NN", 0): 90.0, ("NN + tag embedding", 0): 90.6, ("MMTNN", 0): 93.5,
          ("CRF", 1): 88.0, ("NN", 1): 90.4, ("NN + tag embedding", 1): 90.5, ("MMTNN", 1): 93.0}
    per_seed = pd.DataFrame([{"dataset": "PKU", "model": m, "seed": s, "metric": "f1", "ours": v}
                             for (m, s), v in f1.items()])
    gains = tables.gains_by_seed(per_seed)
    assert gains.loc[("PKU", "tag embedding (Table 3)", "f1"), 0] == pytest.approx(0.6)
    assert gains.loc[("PKU", "tag embedding (Table 3)", "f1"), 1] == pytest.approx(0.1)
    assert gains.loc[("PKU", "neural models over the CRF (Table 3)", "f1"), 1] == pytest.approx(2.4)
    assert ("PKU", "bigrams (Table 6)", "f1") not in gains.index  # its models are not in the table


def test_each_family_trains_at_the_rate_its_dev_f1_chooses(monkeypatch, tmp_path):
    """The learning-rate grid: every rate of a family trains (early stopping on), the best dev F1 chooses, the
    chosen run is the grid's own (loaded, not retrained) and the test set takes no part."""
    import dataclasses

    from hanzilm.papers.mmtnn import experiment as ex
    from hanzilm.store import Store

    words = [["我们", "在", "北京", "工作", "。"], ["今天", "北京", "天气", "很", "好", "。"]]
    monkeypatch.setattr(ex, "split_sentences", lambda cfg: (words * 5, words))
    monkeypatch.setattr(ex, "_data_key", lambda ch, cfg: {"toy": "0"})
    monkeypatch.setattr(ex, "GRID_FAMILIES", (("nn", False),))  # the pre-trained family needs the LM corpus
    ch = dataclasses.replace(ex.configure("smoke"), store=Store(tmp_path), lr_grid={"nn": (0.01, 0.3)},
                             segmenter=dataclasses.replace(ex.configure("smoke").segmenter, epochs=4, patience=1))
    with pytest.raises(HanzilmError, match="train the chapter first"):
        ex.lr_grid(ch)  # a table reads the grid; only the chapter's training step trains it
    ex.train_all(ch)
    grid = ex.lr_grid(ch)
    assert list(grid.family) == ["nn", "nn"] and list(grid.lr) == [0.01, 0.3]
    assert grid.chosen.sum() == 1 and (grid.epochs <= 4).all()
    best = grid.loc[grid.best_dev_f1.idxmax()]
    assert bool(best.chosen) or grid.best_dev_f1.nunique() == 1
    chosen = ex.select_learning_rates(ch)
    assert chosen.lrs == {"nn": float(grid.lr[grid.chosen].iloc[0])}
    assert ex.is_complete(ex.run_dir(chosen, chosen.model(dataset="pku", model="nn")))


@pytest.mark.parametrize("vectors", [False, True])
def test_runs_join_the_pool_as_soon_as_their_grid_and_vectors_are_stored(monkeypatch, vectors):
    """One pool for the chapter (a one-worker pool simulated here, the store a set): every model of the
    chapter's pages trains once, at the rate its family's grid chose; none before its family's grid is stored
    nor, pre-trained, before the vectors (which go first); and models wait for their own family's grid only."""
    import dataclasses

    from hanzilm.papers.mmtnn import experiment as ex
    from hanzilm.papers.mmtnn.experiment import runs

    ch = dataclasses.replace(ex.configure("smoke"), lr_grid={"nn": (0.1, 0.2), "mmtnn": (0.05, 0.1)})
    f1 = {("nn", 0.1): 90.0, ("nn", 0.2): 91.0, ("mmtnn", 0.05): 93.0, ("mmtnn", 0.1): 92.0}
    done: set = {"vectors"} if vectors else set()
    order: list = []
    monkeypatch.setattr(ex, "run_dir", lambda ch, cfg: cfg)
    monkeypatch.setattr(ex, "is_complete", lambda d: d in done)
    monkeypatch.setattr(ex, "vectors_stored", lambda *a: "vectors" in done)
    monkeypatch.setattr(ex, "dev_history", lambda ch, c: [{"epoch": 1, "dev_f1": f1[c.model, c.lr]}])
    monkeypatch.setattr(ex, "training_summary", lambda ch, c: {"wall_time": 1.0})

    def one_worker(fn, runs, *, then, rank, **kw):
        waiting = list(runs)
        while waiting:
            job = min(waiting, key=rank)
            waiting.remove(job)
            order.append(job[1])
            done.add("vectors" if job[1] is None else job[1])
            waiting += then(job, None)

    monkeypatch.setattr(ex, "run_all", one_worker)
    ex.train_all(ch)
    chosen = ex.select_learning_rates(ch)            # reads the grid: nothing left to train
    assert chosen.lrs == {"nn": 0.2, "mmtnn": 0.05}
    trained = [c for c in order if c is not None]
    assert sorted(map(repr, trained)) == sorted(map(repr, runs(chosen)))   # each once, at the chosen rates
    assert order.count(None) == (not vectors) and (vectors or order[0] is None)
    grid = set(ex.grid_configs(ch))
    for i, c in enumerate(trained):
        if c.pretrained and not vectors:
            assert None in order[:order.index(c)]
        if c not in grid and c.model in ch.lr_grid:
            assert all(g in trained[:i] for g in grid if g.model == c.model), c
    # the MMTNN family's further runs start while the NN grid is still to train (not after the whole grid)
    first_mmtnn = min(i for i, c in enumerate(trained) if c.model == "mmtnn" and c not in grid)
    assert any(g.model == "nn" for g in trained[first_mmtnn:] if g in grid)
    assert ex.select_learning_rates(dataclasses.replace(ch, lrs={"nn": 0.1})).lrs == {"nn": 0.1}


def test_grid_reading_names_edge_choices_and_runs_stopped_by_the_epoch_cap():
    import pandas as pd

    from hanzilm.papers.mmtnn.tables import grid_reading

    rows = [("nn", 0.2, False, 93.0, 29, 30), ("nn", 0.4, True, 93.5, 29, 30),
            ("mmtnn", 0.05, True, 94.1, 16, 19), ("mmtnn", 0.1, False, 93.9, 10, 13),
            ("mmtnn", 0.025, False, 93.8, 13, 16)]
    wide = pd.DataFrame(rows, columns=["family", "lr", "chosen", "best_dev_f1", "best_epoch", "epochs"])
    grid = wide.melt(id_vars=["family", "lr", "chosen"], var_name="metric", value_name="ours")
    text = grid_reading(grid, 30, 3)
    assert "nn 0.4 (the largest)" in text and "mmtnn 0." not in text     # 0.05 lies inside its grid
    assert "nn (best epoch 29 of 30)" in text and "mmtnn (" not in text
    inside = grid[grid.family == "mmtnn"]
    assert grid_reading(inside, 30, 3).startswith("Every family chose a rate inside its grid")
    # a best epoch 27 of 30 is within patience 5 of the cap (training would have gone on), not within patience 3
    late = grid.assign(ours=grid.ours.where(~((grid.family == "nn") & (grid.metric == "best_epoch")), 27))
    assert "nn (best epoch 27 of 30)" in grid_reading(late, 30, 5)
    assert "nn (best epoch" not in grid_reading(late, 30, 3)


def test_a_models_spread_is_its_seed_sd_and_its_bootstrap_sd_combined(monkeypatch):
    """`model_spread`: each model's sd over the seeds of `seed_spread`, the bootstrap sd of its value over the
    test sentences at the tables' seed (that model's own line counts), and the two in quadrature."""
    import numpy as np
    import pandas as pd

    from hanzilm import spread
    from hanzilm.eval import sighan
    from hanzilm.papers.mmtnn import experiment as ex, tables

    ch = ex.configure("smoke")
    rng = np.random.default_rng(1)
    lines = {}

    def counts(ch_, cfg):
        if cfg not in lines:
            true = rng.integers(8, 12, 60)
            lines[cfg] = np.column_stack([true, rng.integers(0, 3, 60), true, rng.integers(0, 3, 60),
                                          rng.integers(1, 3, 60), rng.integers(0, 2, 60)]).astype(float)
        return lines[cfg]

    monkeypatch.setattr(ex, "line_counts", counts)
    per_seed = pd.DataFrame([{"dataset": "PKU", "model": "MMTNN", "seed": s, "metric": "f1", "ours": v}
                             for s, v in zip((0, 1), (93.0, 93.6))])
    out = tables.model_spread(ch, per_seed).set_index("metric")["ours"]
    cfg = tables.spread_configs(ch)[("PKU", "MMTNN", ch.segmenter.seed)]
    boot = spread.bootstrap_sd(lambda t: sighan.measure_of_totals(t, "f1"), [lines[cfg]])
    assert out["value"] == 93.0 and out["n_seeds"] == 2
    assert out["seed_sd"] == pytest.approx(np.std([93.0, 93.6], ddof=1))
    assert out["bootstrap_sd"] == pytest.approx(boot) and boot > 0
    assert out["sd"] == pytest.approx(np.hypot(out["seed_sd"], boot))
