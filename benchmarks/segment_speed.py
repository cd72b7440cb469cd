"""Segmentation speed and quality on the PKU test input, in one process: our trained segmenters beside jieba and
(if installed) pkuseg, the tools people would otherwise use; plus MMTNN training time per epoch on full PKU.

    .venv/bin/python benchmarks/segment_speed.py [--profile cpu] [--threads 2] [--repeats 3] [--train-steps 100]
                                                 [--one] [--against REV]
    .venv/bin/python benchmarks/segment_speed.py --shipped [--mb 10] [--threads 1] [--repeats 3]

`--shipped` times the command as users run it: `hanzilm segment`'s stream (UTF-8 lines in, the shipped model,
words out) over `--mb` MB of the PKU test input repeated, beside jieba cutting the same lines and writing them the
same way, in turn in one process; F is each on one copy of the test input. It also prints the ceiling the
shipped model's arithmetic sets: its first layer's multiply-adds per character at the speed NumPy's float32
product of that shape reaches on this thread.

The segmenters are the chapter's trained models, loaded as `hanzilm segment` loads them (NumPy engine) (`hanzilm
paper run --profile cpu --only 'mmtnn/*'` trains them; this script trains them first if they are missing); `--one`
times only the PKU MMTNN with pre-training (`hanzilm segment`'s default model), which, on an empty model store,
trains in about 40 minutes rather than the three's hour and more. F is the bakeoff F-measure (our scorer, official gold and
training word list). Decoding speed is the best of `--repeats` runs over the whole test input, characters per
second, the systems timed in turn round after round (machine load hits all alike); ratios are against jieba
measured in the same run. `--against REV` also times each of our segmenters as the package at git revision REV
decodes it (`git archive` into a temporary directory, imported under another name; what it imports by absolute
name is today's), on the same saved model, and prints the speed ratio and whether the output is the same: a
change to the decoder measured in one process. Training time per epoch is extrapolated from
`--train-steps` max-margin steps on a copy of the model, and reported beside the per-epoch time recorded by the
chapter's own training run. pkuseg is a benchmark-only extra: `pip install --no-build-isolation pkuseg`.
"""

from __future__ import annotations

import argparse
import atexit
import copy
import importlib
import io
import math
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Callable

from hanzilm.cliutil import set_threads

# --threads N holds for NumPy's BLAS too (the segmenters' engine), which reads it once, when first imported
set_threads(int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 2)

import torch  # noqa: E402

from hanzilm.eval.sighan import score  # noqa: E402
from hanzilm.papers.mmtnn import experiment as ex  # noqa: E402
from hanzilm.papers.mmtnn.segmenter import Segmenter  # noqa: E402
from hanzilm.store import load_summary  # noqa: E402
from hanzilm.train import make_optimizer  # noqa: E402


def _timed(systems: dict, lines, repeats: int) -> dict[str, tuple[list, float]]:
    """name -> (output, best seconds) of each system over `lines`, the systems in turn, `repeats` rounds."""
    best, out = dict.fromkeys(systems, math.inf), {}
    for _ in range(repeats):
        for name, fn in systems.items():
            t0 = time.perf_counter()
            out[name] = fn(lines)
            best[name] = min(best[name], time.perf_counter() - t0)
    return {name: (out[name], best[name]) for name in systems}


def _segmenter_at(rev: str):
    """The `Segmenter` class of hanzilm at git revision `rev`, imported as `hanzilm_at_<rev>`."""
    root = Path(__file__).resolve().parents[1]
    archive = subprocess.run(["git", "archive", rev, "lib/hanzilm"], cwd=root, capture_output=True)
    if archive.returncode:
        raise SystemExit(f"--against {rev}: {archive.stderr.decode().strip()}")
    tmp = Path(tempfile.mkdtemp(prefix="hanzilm-at-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(tmp, filter="data")
    name = "hanzilm_at_" + re.sub(r"\W", "_", rev)
    (tmp / "lib" / "hanzilm").rename(tmp / name)
    sys.path.insert(0, str(tmp))
    return importlib.import_module(f"{name}.papers.mmtnn.segmenter").Segmenter


def _product_seconds(rows: int, maps, repeats: int) -> float:
    """Best of `repeats` seconds of NumPy's float32 product (rows x H1) @ `maps` on random rows."""
    import numpy as np

    a = np.random.default_rng(0).standard_normal((rows, maps.shape[0]), dtype=np.float32)
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        a @ maps
        best = min(best, time.perf_counter() - t0)
    return best


def _matmul_gflops(repeats: int = 50) -> float:
    """The same-process baseline for the decode speed: NumPy's float32 product of one batch of the MMTNN decode,
    (4,096 positions x 125) @ (125 x 1,250), best of `repeats` (about 85 GFLOP/s on one AVX2 EPYC thread)."""
    import numpy as np

    b = np.random.default_rng(1).standard_normal((125, 1250), dtype=np.float32)
    return 2 * 4096 * b.shape[0] * b.shape[1] / _product_seconds(4096, b, repeats) / 1e9


class _Sink:
    """A write-only text stream that keeps nothing (the output's cost is its encoding, as the command's)."""

    def write(self, text: str) -> int:
        return len(text.encode("utf-8"))


def _jieba():
    import jieba

    jieba.setLogLevel(60)
    jieba.initialize()
    return jieba


def _ceiling(segmenter: Segmenter, repeats: int = 20) -> tuple[float, float]:
    """(multiply-adds per character of the model's first layer as a dense product, characters/s at which this
    thread's float32 product of that shape computes them for a batch of 4,096 positions)."""
    maps = segmenter.model.char_maps
    return maps.shape[0] * maps.shape[1], 4096 / _product_seconds(4096, maps, repeats)


def shipped(args: argparse.Namespace) -> None:
    """`--shipped`: the command's speed and F beside jieba's (see the module's docstring)."""
    from hanzilm.papers.mmtnn import load
    from hanzilm.papers.mmtnn.commands import SHIPPED
    from hanzilm.papers.mmtnn.segmenter import iter_lines, segment_stream

    lines, gold = ex.test_set("pku")
    words = ex.training_words("pku")
    one = ("\n".join(lines) + "\n").encode("utf-8")
    data = one * math.ceil(args.mb * 1e6 / len(one))
    n_chars = sum(len(line) for line in data.decode("utf-8").splitlines())
    ours = {"hanzilm segment (shipped MMTNN + pre-training)": load("shipped")}
    if args.against:
        ours[f"hanzilm segment @ {args.against}"] = _segmenter_at(args.against).load(SHIPPED)
    jieba = _jieba()

    def command(seg) -> Callable[[bytes], None]:
        return lambda raw: segment_stream(seg, iter_lines(io.BytesIO(raw), "<bench>"), _Sink(), "  ", block=2000)

    def theirs(raw: bytes) -> None:
        out = _Sink()
        for line in raw.decode("utf-8").splitlines():
            out.write("  ".join(w for w in jieba.cut(line) if w.strip()) + "\n")

    systems = {**{name: command(seg) for name, seg in ours.items()}, "jieba 0.42 (default)": theirs}
    timed = _timed({name: lambda _, fn=fn: fn(data) for name, fn in systems.items()}, [None], args.repeats)
    outputs = {name: seg.segment_lines(lines) for name, seg in ours.items()}
    f1 = {name: score(words, gold, out).total.f1 for name, out in outputs.items()}
    f1["jieba 0.42 (default)"] = score(words, gold, [[w for w in jieba.cut(line) if w.strip()] if line else []
                                                     for line in lines]).total.f1
    speeds = {name: n_chars / secs for name, (_, secs) in timed.items()}
    base = speeds["jieba 0.42 (default)"]
    print(f"{len(data) / 1e6:.1f} MB ({n_chars:,} characters: the PKU test input x {len(data) // len(one)}); "
          f"threads {args.threads}; best of {args.repeats}")
    print(f"| system | F (PKU test) | chars/s | vs jieba |\n|---|---|---|---|")
    for name, speed in speeds.items():
        print(f"| {name} | {100 * f1[name]:.2f} | {speed / 1e3:,.0f} k | {speed / base:.2f} |")
    if args.against:
        same = len({str(out) for out in outputs.values()}) == 1
        print(f"output on the PKU test input {'the same' if same else 'DIFFERENT'} at {args.against}")
    macs, ceiling = _ceiling(next(iter(ours.values())))
    print(f"the first layer as a dense product ({macs / 1e3:,.0f} k multiply-adds per character) would alone cap "
          f"a decode at {ceiling / 1e3:,.0f} k characters/s on this thread ({2 * macs * ceiling / 1e9:.0f} GFLOP/s "
          "in NumPy's float32 product of its shape); it is looked up instead (`NumpyTagger.first_layer`)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shipped", action="store_true", help="time `hanzilm segment` (the shipped model) beside "
                    "jieba on --mb MB of the PKU test input repeated")
    ap.add_argument("--mb", type=float, default=10.0)
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--train-steps", type=int, default=100)
    ap.add_argument("--one", action="store_true", help="only the PKU MMTNN with pre-training (`hanzilm segment`'s "
                    "default), not the chapter's three segmenters")
    ap.add_argument("--against", metavar="REV", help="also decode with the package at this git revision")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    os.environ.setdefault("HANZILM_PROGRESS", "0")
    if args.shipped:
        return shipped(args)

    ch = ex.configure(args.profile)
    lines, gold = ex.test_set("pku")  # the whole test input, whatever the profile scores
    words = ex.training_words("pku")
    n_chars = sum(len(line.replace(" ", "")) for line in lines)

    systems = {}
    variants = {"MMTNN + pre-training + bigram (ours)": dict(model="mmtnn", pretrained=True, bigram=True),
                "MMTNN (ours)": dict(model="mmtnn"), "NN, Zheng-style (ours)": dict(model="nn")}
    if args.one:
        variants = {"MMTNN + pre-training (ours)": dict(model="mmtnn", pretrained=True)}
    before = _segmenter_at(args.against) if args.against else None
    for name, fields in variants.items():
        cfg = ch.model(dataset="pku", **fields)
        ex.train_segmenter(ch, cfg)  # from the model store, or trained now
        # as users load it (`hanzilm segment`, `hanzilm.papers.mmtnn.load`): the saved segmenter, NumPy engine
        systems[name] = Segmenter.load(ex.segmenter_path(ch, cfg)).segment_lines
        if before is not None:
            systems[f"{name} @ {args.against}"] = before.load(ex.segmenter_path(ch, cfg)).segment_lines
    jieba = _jieba()
    systems["jieba (default)"] = lambda ls: [list(jieba.cut(line)) if line else [] for line in ls]
    try:
        import pkuseg

        seg = pkuseg.pkuseg()
        systems["pkuseg (default model)"] = lambda ls: [seg.cut(line) if line else [] for line in ls]
    except ImportError:
        print("pkuseg not installed (pip install --no-build-isolation pkuseg): skipped")

    rows, outputs = [], {}
    for name, (out, secs) in _timed(systems, lines, args.repeats).items():
        out = outputs[name] = [[w for w in line if w.strip()] for line in out]
        f1 = score(words, gold, out).total.f1
        rows.append((name, f1, n_chars / secs))
    base = dict((n, s) for n, _, s in rows)["jieba (default)"]
    print(f"PKU test input: {len(lines)} lines, {n_chars} characters; torch threads {args.threads}; "
          f"{_matmul_gflops():.0f} GFLOP/s in NumPy's product of the MMTNN decode's shape in this process")
    print(f"{'system':50s} {'F':>6s} {'chars/s':>10s} {'vs jieba':>9s}")
    for name, f1, speed in rows:
        print(f"{name:50s} {100 * f1:6.2f} {speed:10.0f} {speed / base:9.2f}")
    speeds = {name: speed for name, _, speed in rows}
    for name in variants if args.against else ():
        old = f"{name} @ {args.against}"
        print(f"{name}: {speeds[name] / speeds[old]:.2f}x the speed at {args.against}, output "
              + ("the same" if outputs[name] == outputs[old] else "DIFFERENT"))

    # training time per epoch (full PKU stand-in, 90 % split), MMTNN
    cfg = ch.model(dataset="pku", model="mmtnn", pretrained=args.one)
    train, _ = ex.split_sentences(cfg)
    segmenter = ex.train_segmenter(ch, cfg)
    model = copy.deepcopy(segmenter.model).train()
    tcfg = ex.train_config(cfg, len(train))
    opt = make_optimizer(model, tcfg)
    batches = ex._batches(cfg, segmenter.encoder, train)
    per_epoch = math.ceil(len(train) / cfg.batch_size)
    t0 = time.perf_counter()
    for step in range(args.train_steps):
        loss = model.loss(batches(step))
        opt.zero_grad()
        loss.backward()
        opt.step()
    secs = (time.perf_counter() - t0) / args.train_steps * per_epoch
    print(f"MMTNN training, full PKU stand-in ({len(train)} sentences, {per_epoch} steps/epoch): "
          f"{secs:.0f} s/epoch measured here ({args.train_steps} steps)", end="")
    summary = load_summary(ex.run_dir(ch, cfg))
    recorded = summary["wall_time"] / (summary["steps"] / per_epoch)
    print(f", {recorded:.0f} s/epoch in the chapter's run (dev evaluation and checkpoints included)")


if __name__ == "__main__":
    main()
