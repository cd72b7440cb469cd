"""The command line under faults, run as a user runs it (a subprocess): closed pipes, full disks, Ctrl-C, bad
paths and options, --threads and --flush; what it imports; and the NumPy decoder `hanzilm segment` uses, equal to
the torch model on every variant."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hanzilm.cli import main
import torch

from hanzilm.papers.mmtnn.encoding import Encoder
from hanzilm.papers.mmtnn.numpy_tagger import NumpyTagger
from hanzilm.papers.mmtnn.segmenter import Segmenter
from hanzilm.papers.mmtnn.spec import TaggerSpec
from hanzilm.papers.mmtnn.tagger import WindowTagger

HANZILM = [sys.executable, "-m", "hanzilm.cli"]
TEXTS = ["我们在北京工作。", "今天北京天气很好。", "访问www.example.com获取iPhone12", "１９９８年北京会议。"]
VARIANTS = {  # the paper's three models, and MMTNN with bigrams (Table 6)
    "nn": dict(transitions=True, tag_embedding=False, tensor=False),
    "nn_tag": dict(tensor=False),
    "mmtnn": dict(),
    "mmtnn_bigram": dict(bigram=True),
}


def _tagger(flags: dict, seed: int = 0) -> tuple[WindowTagger, Encoder]:
    torch.manual_seed(seed)
    enc = Encoder.build(TEXTS, min_freq=1, bigrams=flags.get("bigram", False), bigram_min_freq=1)
    model = WindowTagger(TaggerSpec(dim=8, hidden=16, factors=4, **flags), len(enc.vocab), enc.n_bigrams)
    if flags.get("transitions"):
        torch.nn.init.normal_(model.transition)  # zeros at initialisation would test nothing
    return model, enc


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    model, enc = _tagger(VARIANTS["mmtnn_bigram"])
    directory = tmp_path_factory.mktemp("cli") / "segmenter"
    Segmenter(model, enc).save(directory)
    return directory


@pytest.fixture(scope="module")
def text_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "in.txt"
    path.write_text("\n".join(TEXTS * 50) + "\n", encoding="utf-8")
    return path


def _run(*args: str, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("stdout", subprocess.PIPE)
    return subprocess.run([*HANZILM, *args], stderr=subprocess.PIPE, timeout=60, **kw)


def _one_line_error(result: subprocess.CompletedProcess) -> str:
    err = result.stderr.decode("utf-8")
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err


# ---- the NumPy decoder ----

@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_numpy_tagger_equals_the_torch_model(name):
    model, enc = _tagger(VARIANTS[name])
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    assert {k: v.shape for k, v in state.items()} == model.spec.weight_shapes(len(enc.vocab), enc.n_bigrams)
    fast = NumpyTagger(model.spec, state)
    arrays = enc.arrays(["我们在北京", "北京天气很好ab12", ""])
    with torch.no_grad():
        expected = model.scores(enc.batch(["我们在北京", "北京天气很好ab12", ""])).numpy()
    got = fast.scores(arrays)
    # the start tag (previous tag 4) is scored at each piece's first position only: the search reads no other
    np.testing.assert_allclose(got[:, :, :4], expected[:, :, :4], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[:, 0, 4], expected[:, 0, 4], rtol=1e-5, atol=1e-5)
    assert (fast.decode(arrays) == model.decode(arrays)).all()


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_looked_up_first_layer_equals_the_dense_product(name):
    model, enc = _tagger(VARIANTS[name])
    fast = NumpyTagger(model.spec, {k: v.detach().numpy() for k, v in model.state_dict().items()})
    rng = np.random.default_rng(0)
    windows = rng.integers(0, len(enc.vocab), (3, 7, model.spec.window))
    pairs = rng.integers(0, enc.n_bigrams, (3, 7, model.spec.window - 1)) if model.spec.bigram else None
    np.testing.assert_allclose(fast.first_layer(windows, pairs), fast.first_layer_dense(windows, pairs),
                               rtol=1e-5, atol=1e-5)


def test_load_engines_agree_and_bad_weights_name_the_file(model_dir, tmp_path):
    lines = TEXTS + ["", "北京  今天"]
    fast, slow = Segmenter.load(model_dir), Segmenter.load(model_dir, engine="torch")
    assert isinstance(fast.model, NumpyTagger) and isinstance(slow.model, WindowTagger)
    assert fast.segment_lines(lines) == slow.segment_lines(lines)
    broken = tmp_path / "broken"
    broken.mkdir()
    for f in model_dir.iterdir():
        (broken / f.name).write_bytes(f.read_bytes())
    (broken / "model.safetensors").write_bytes((model_dir / "model.safetensors").read_bytes()[:100])
    result = _run("segment", "--model", str(broken), input=b"x\n")
    assert result.returncode == 2
    assert f"{broken / 'model.safetensors'}: its sha256 differs from manifest.json" in _one_line_error(result)
    (broken / "manifest.json").unlink()  # a segmenter saved before manifests: the weights themselves are checked
    result = _run("segment", "--model", str(broken), input=b"x\n")
    assert result.returncode == 2
    assert f"{broken / 'model.safetensors'}: cannot read the model weights" in _one_line_error(result)


# ---- faults ----

def test_closed_pipe_ends_quietly(model_dir, text_file):
    for args in (["segment", "--model", str(model_dir), str(text_file)], ["data", "list"], ["--help"]):
        read, write = os.pipe()
        os.close(read)  # the reader is gone before the first write, as after `| head -1` has its line
        try:
            result = _run(*args, stdout=write)
        finally:
            os.close(write)
        assert (result.returncode, result.stderr) == (141, b""), args


def test_closed_pipe_mid_stream(model_dir):
    """`hanzilm segment --flush | head -1`: the reader leaves after one line, the next write ends the command."""
    proc = subprocess.Popen([*HANZILM, "segment", "--flush", "--model", str(model_dir)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write("我们在北京工作。\n".encode("utf-8"))
    proc.stdin.flush()
    assert "".join(proc.stdout.readline().decode("utf-8").split()) == "我们在北京工作。"
    proc.stdout.close()
    try:
        proc.stdin.write("今天很好。\n".encode("utf-8"))
        proc.stdin.close()
    except BrokenPipeError:
        pass
    assert proc.wait(timeout=30) == 141 and proc.stderr.read() == b""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_a_full_disk_names_the_output(model_dir, text_file, tmp_path):
    words = tmp_path / "words.txt"
    words.write_text("北京\n", encoding="utf-8")
    for args in (["segment", "--model", str(model_dir), str(text_file)],
                 ["score", "--mode", "exact", str(words), str(text_file), str(text_file)], ["data", "list"]):
        with open("/dev/full", "wb") as full:
            result = _run(*args, stdout=full)
        assert result.returncode == 2, args
        assert _one_line_error(result) == "hanzilm: error: <stdout>: cannot write: No space left on device\n"


def test_ctrl_c_exits_130_with_one_line(model_dir):
    # SIGINT back to its default in the child: a shell's background job (`cmd &`) ignores it, and Python keeps an
    # ignored SIGINT ignored, so a test run from one would otherwise wait forever
    proc = subprocess.Popen([*HANZILM, "segment", "--flush", "--model", str(model_dir)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    proc.stdin.write("我们\n".encode("utf-8"))
    proc.stdin.flush()
    assert proc.stdout.readline()  # past start-up, waiting for the next line
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 130
    assert proc.stderr.read() == b"hanzilm: interrupted\n"
    proc.stdin.close()
    proc.stdout.close()


def test_bad_paths_and_options_are_one_line(model_dir, text_file, tmp_path):
    cases = [
        (["segment", "--model", str(model_dir), str(tmp_path / "missing.txt")],
         f"{tmp_path / 'missing.txt'}: cannot read file: No such file or directory"),
        (["segment", "--model", str(model_dir), str(tmp_path)], f"{tmp_path}: cannot read file: Is a directory"),
        (["segment", "--model", str(tmp_path), str(text_file)], f"{tmp_path / 'config.json'}: not a segmenter"),
        (["score", "-", str(tmp_path / "gold.txt"), str(text_file)], f"{tmp_path / 'gold.txt'}: cannot read file"),
        (["segment", "--model", str(model_dir), "--threads", "0"], "--threads: must be at least 1, not 0"),
        (["score", "--threads", "x", "-", "a", "b"], "--threads: not a whole number: 'x'"),
        (["senses", "天", "--threads", "-1"], "--threads: must be at least 1, not -1"),
    ]
    for args, message in cases:
        result = _run(*args, stdin=subprocess.DEVNULL)
        err = result.stderr.decode("utf-8")
        assert result.returncode == 2 and message in err and "Traceback" not in err, (args, err)
        if not any(a.startswith("--threads") for a in args):
            _one_line_error(result)


# ---- --threads, --flush and what a command imports ----

def test_threads_do_not_change_the_output(model_dir, text_file, tmp_path):
    one = _run("segment", "--threads", "1", "--model", str(model_dir), str(text_file))
    two = _run("segment", "--threads", "2", "--model", str(model_dir), str(text_file))
    assert one.returncode == two.returncode == 0 and one.stdout == two.stdout
    assert one.stdout.decode("utf-8").count("\n") == len(TEXTS) * 50
    (tmp_path / "out.txt").write_bytes(one.stdout)
    scored = [_run("score", "--threads", n, "-", str(text_file), str(tmp_path / "out.txt")) for n in ("1", "3")]
    assert scored[0].returncode == 0 and scored[0].stdout == scored[1].stdout
    assert _run("data", "verify", "--threads", "2", "sighan2005").returncode in (0, 1)  # 1: data not here


def test_flush_writes_each_line_before_the_input_ends(model_dir):
    proc = subprocess.Popen([*HANZILM, "segment", "--flush", "--model", str(model_dir)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for text in TEXTS[:2]:
            proc.stdin.write((text + "\n").encode("utf-8"))
            proc.stdin.flush()  # the pipe stays open: only a flushed answer can arrive
            ready, _, _ = select.select([proc.stdout], [], [], 30)
            assert ready, "no output before the end of the input"
            assert "".join(proc.stdout.readline().decode("utf-8").split()) == text
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        proc.stdout.close()
        proc.stderr.close()


def test_commands_import_neither_torch_nor_pandas(model_dir, text_file):
    probe = ("import sys\nfrom hanzilm.cli import main\nstatus = main(sys.argv[1:])\n"
             "print(sorted(m for m in ('torch', 'pandas') if m in sys.modules), status, file=sys.stderr)\n")
    for args in (["--help"], ["score", "--help"], ["segment", "--help"], ["data", "list"],
                 ["score", "--mode", "exact", "-", str(text_file), str(text_file)],
                 ["segment", "--model", str(model_dir), str(text_file)]):
        result = subprocess.run([sys.executable, "-c", probe, *args], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, timeout=60)
        assert result.stderr.decode().splitlines()[-1] == "[] 0", (args, result.stderr.decode())


def test_no_numeric_library_loads_before_a_command_sets_its_threads():
    """Registering the commands imports none of numpy, torch, pandas: their thread pools read the environment
    once, when loaded, so one loaded at registration ran `--threads 1` on every core."""
    probe = ("import sys\nfrom hanzilm import cli\n"
             "try:\n    cli._dispatch(['segment', '--help'])\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in ('numpy', 'torch', 'pandas') if m in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, timeout=60)
    assert result.stdout.decode().splitlines()[-1] == "[]", result.stderr.decode()


def test_senses_reads_a_stored_backpack_without_torch_or_pandas(tmp_path):
    """`hanzilm senses` on a run directory: the NumPy reader (torch and pandas never imported), one line per
    sense, glosses from the few CC-CEDICT entries it looks up."""
    from safetensors.torch import save_model

    from hanzilm.data.vocab import CharVocab
    from hanzilm.papers.backpack.backpack import Backpack, BackpackConfig
    from hanzilm.papers.backpack.data import SPECIALS
    from hanzilm.papers.backpack.sense_reader import VOCAB

    vocab = CharVocab.build(["沙滩天空海水大学生人们"], specials=SPECIALS)
    torch.manual_seed(0)
    model = Backpack(BackpackConfig(vocab_size=len(vocab), block_size=8, n_layer=1, n_head=2, n_embd=16,
                                    n_senses=4)).eval()
    save_model(model, str(tmp_path / "best.safetensors"))
    vocab.save(tmp_path / VOCAB)
    probe = ("import sys\nfrom hanzilm.cli import main\nstatus = main(sys.argv[1:])\n"
             "print(sorted(m for m in ('torch', 'pandas') if m in sys.modules), status, file=sys.stderr)\n")
    result = subprocess.run([sys.executable, "-c", probe, "senses", "沙", "--model", str(tmp_path), "--top", "3"],
                            capture_output=True, timeout=60)
    err, out = result.stderr.decode().splitlines(), result.stdout.decode().splitlines()
    assert err[-1] == "[] 0", result.stderr.decode()
    assert out[0].startswith("沙 (") and len(out) == 1 + 4
    assert all(line.startswith(f"sense {i:2d}: ") for i, line in enumerate(out[1:]))


@pytest.mark.parametrize("seed", ["-1", "99999999999999999999", "1.5", "x"])
def test_paper_run_refuses_a_seed_at_parse_time(seed, capsys):
    """A seed no run can take is refused before anything runs (it was accepted and every notebook failed)."""
    assert main(["paper", "run", "--profile", "smoke", "--seed", seed, "--plan"]) == 2
    err = capsys.readouterr().err
    assert "--seed" in err and ("from 0 to 2,147,483,647" in err or "not a whole number" in err)


# ---- small defects of the commands, each found by a user ----------------------------------------------------

def test_lines_end_at_a_lone_cr_and_a_bom_is_dropped_from_every_line():
    from hanzilm.papers.mmtnn.segmenter import iter_lines

    assert list(iter_lines([b"a\rb\rc\n", b"d\r\n", b"\xef\xbb\xbfe\n", b"f\xef\xbb\xbf"], "x")) == \
        ["a", "b", "c", "d", "e", "f\ufeff"]   # a BOM inside a line is text; at a line's start, a join's mark


def test_segment_reads_stdin_from_a_dash(model_dir):
    result = _run("segment", "--model", str(model_dir), "-", input="我们在北京\n".encode())
    assert result.returncode == 0 and "".join(result.stdout.decode().split()) == "我们在北京"


@pytest.mark.parametrize("sep", ["", "\n"])
def test_segment_refuses_a_separator_that_would_lose_the_boundaries(model_dir, sep):
    result = _run("segment", "--model", str(model_dir), "--sep", sep, input="我们\n".encode())
    assert result.returncode == 2 and "--sep: must be at least one character" in result.stderr.decode()


def test_score_of_an_empty_gold_is_an_error_not_a_zero(tmp_path):
    for name in ("gold", "test"):
        (tmp_path / name).write_text("", encoding="utf-8")
    result = _run("score", "-", str(tmp_path / "gold"), str(tmp_path / "test"), "--mode", "exact")
    assert result.returncode == 2 and "the gold has no words" in _one_line_error(result)


def test_models_refuses_an_unknown_profile():
    result = _run("models", "--profile", "bogus")
    assert result.returncode == 2 and "invalid choice: 'bogus'" in result.stderr.decode()


def test_segment_with_a_model_that_is_not_a_segmenter_says_so():
    result = _run("segment", "--model", "backpack@smoke", input="我们\n".encode())
    assert result.returncode == 2 and "a Backpack or a segmental LM is not one" in _one_line_error(result)


@pytest.mark.parametrize("command, says", [(["score"], "the gold segmentation: words separated"),
                                           (["score"], "the segmentation to score, line for line"),
                                           (["paper", "run"], "the sizes and step counts every notebook")])
def test_every_argument_has_help(command, says):
    assert says in " ".join(_run(*command, "--help").stdout.decode().split())
