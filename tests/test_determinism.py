"""CPU training is bit-reproducible at a fixed thread count (issue 13, item 11).

A small Backpack and a small MSLM are trained twice at 2 threads, the second time interrupted, resumed and
with another process keeping a core busy, and must end with the same bits. The Backpack is sized so that the
backward of its per-token sense lookup is big enough for torch to split it over both threads (at least 32,768
gradient elements, torch's grain size): that is where the committed cpu Backpack lost its bits. A run resumed
in a process with another thread count must go on at the count it started with (the PKU MSLM seed 0 run of
the cpu store was started by 1-thread workers and resumed at 2 threads).
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest
import torch

from hanzilm.papers.backpack.backpack import Backpack, BackpackConfig
from hanzilm.papers.mslm.data import CharBatches
from hanzilm.papers.mslm.model import SLMConfig, SegmentalLM
from hanzilm.train import TrainConfig, train

THREADS = 2
STEPS, CHECKPOINT_EVERY, CRASH_AT = 12, 4, 6


class Crash(Exception):
    pass


@pytest.fixture(autouse=True)
def _two_threads(monkeypatch):
    monkeypatch.setenv("HANZILM_PROGRESS", "0")
    before = torch.get_num_threads()
    torch.set_num_threads(THREADS)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def busy_core():
    """Another process spinning for the duration of a test: the scheduler then interleaves torch's threads
    differently from an idle machine's, which is how the cpu runs were trained (next to other jobs)."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    yield
    proc.kill()
    proc.wait()


def _zipf(n: int, vocab: int, generator: torch.Generator, offset: int = 0) -> torch.Tensor:
    """Token ids with a few very frequent ones, as in text: a frequent token's gradient rows get added to by
    both threads."""
    p = 1.0 / torch.arange(1, vocab - offset + 1, dtype=torch.float64)
    return torch.multinomial(p, n, replacement=True, generator=generator) + offset


def _cfg(**kw) -> TrainConfig:
    base = dict(steps=STEPS, lr=3e-3, optimizer="adamw", weight_decay=0.1, warmup_steps=2, schedule="linear",
                min_lr=3e-4, grad_clip=1.0, eval_every=0, checkpoint_every=CHECKPOINT_EVERY, log_every=1)
    return TrainConfig(**{**base, **kw})


def _crashing(batches, at_step: int):
    def f(step):
        if step == at_step:
            raise Crash(f"interrupted at step {step}")
        return batches(step)
    return f


def _weights(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _assert_same_bits(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    differ = [k for k in a if not torch.equal(a[k], b[k])]
    assert not differ, f"{len(differ)} of {len(a)} tensors differ, e.g. {differ[:3]}"


def _losses(result) -> list[float]:
    return [row["loss"] for row in result.history if "loss" in row]


# ---- the two models at test size ----------------------------------------------------------------------------

BACKPACK = BackpackConfig(vocab_size=200, block_size=64, n_layer=1, n_head=2, n_embd=32, n_senses=4)
BATCH = 16


def _backpack() -> Backpack:
    torch.manual_seed(0)
    return Backpack(BACKPACK)


def _backpack_batch(step: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(step)
    return _zipf(BATCH * (BACKPACK.block_size + 1), BACKPACK.vocab_size, g).view(BATCH, -1)


def test_backpack_is_big_enough_to_split_its_sense_gradient():
    c = BACKPACK
    assert BATCH * c.block_size * c.n_senses * c.n_embd >= 32768


SLM = SLMConfig(dim=32, num_heads=2, feedforward_dim=48, max_seg_len=4, bf16_output=True)  # dropout as cpu
SLM_VOCAB = 60


def _mslm() -> SegmentalLM:
    torch.manual_seed(0)
    return SegmentalLM(SLM, SLM_VOCAB)


def _mslm_batches() -> CharBatches:
    g = torch.Generator().manual_seed(0)
    lengths = torch.randint(3, 40, (300,), generator=g).tolist()
    rows = [_zipf(n, SLM_VOCAB, g, offset=5).tolist() for n in lengths]   # ids 0-4 are the special symbols
    return CharBatches(rows, 256, seed=0)


MODELS = {"backpack": (_backpack, lambda: _backpack_batch), "mslm": (_mslm, _mslm_batches)}


# ---- the tests ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", MODELS)
def test_two_runs_one_resumed_under_load_have_the_same_bits(tmp_path, name, busy_core):
    build, batches = MODELS[name]
    straight = build()
    first = train(straight, _cfg(), batches(), None, tmp_path / "straight")

    resumed = build()
    with pytest.raises(Crash):
        train(resumed, _cfg(), _crashing(batches(), CRASH_AT), None, tmp_path / "resumed")
    resumed = build()   # a fresh process: the weights come from the checkpoint only
    second = train(resumed, _cfg(), batches(), None, tmp_path / "resumed")

    assert second.steps == first.steps == STEPS
    assert _losses(second) == _losses(first)
    _assert_same_bits(_weights(straight), _weights(resumed))


def test_a_run_resumed_at_another_thread_count_goes_on_at_its_own(tmp_path):
    torch.set_num_threads(1)
    straight = _mslm()
    train(straight, _cfg(), _mslm_batches(), None, tmp_path / "straight")
    with pytest.raises(Crash):
        train(_mslm(), _cfg(), _crashing(_mslm_batches(), CRASH_AT), None, tmp_path / "resumed")

    torch.set_num_threads(2)
    resumed = _mslm()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train(resumed, _cfg(), _mslm_batches(), None, tmp_path / "resumed")
    _assert_same_bits(_weights(straight), _weights(resumed))
    assert any("resumed on 1 torch threads" in str(w.message) for w in caught), "no word of the change"
    assert torch.get_num_threads() == 2   # the caller's count again


def test_thread_count_matters_so_the_resume_check_can_fail(tmp_path):
    """The check above means something only if 1 and 2 threads train this MSLM to different bits."""
    runs = []
    for threads in (1, 2):
        torch.set_num_threads(threads)
        model = _mslm()
        train(model, _cfg(), _mslm_batches(), None, tmp_path / f"t{threads}")
        runs.append(_weights(model))
    assert any(not torch.equal(runs[0][k], runs[1][k]) for k in runs[0])


def test_deterministic_mode_is_the_callers_again_after_training(tmp_path):
    assert not torch.are_deterministic_algorithms_enabled()
    train(_backpack(), _cfg(steps=2), _backpack_batch, None, tmp_path)
    assert not torch.are_deterministic_algorithms_enabled()
