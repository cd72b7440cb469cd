"""The segmenter people use: save/load, the CLI, empty lines, non-Chinese runs, unknown characters, long lines,
bad encodings."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
import torch

from hanzilm.cli import main
from hanzilm.errors import DataError
from hanzilm.papers.mmtnn.tagger import TaggerSpec, WindowTagger
from hanzilm.papers.mmtnn.encoding import Encoder
from hanzilm.papers.mmtnn.segmenter import Segmenter, iter_lines, segment_stream
from hanzilm.papers.mmtnn.tags import B, E, M, S, allowed_tags, normalize

SENTENCES = [["我们", "在", "北京", "工作", "。"], ["今天", "北京", "天气", "很", "好", "。"],
             ["我们", "今天", "很", "好", "。"], ["１９９８年", "北京", "工作", "会议", "。"]]


@pytest.fixture(scope="module")
def segmenter() -> Segmenter:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: threads only spin
    torch.manual_seed(0)
    enc = Encoder.build(["".join(s) for s in SENTENCES], min_freq=1, bigrams=True, bigram_min_freq=1)
    model = WindowTagger(TaggerSpec(dim=8, hidden=16, factors=4, bigram=True), len(enc.vocab), enc.n_bigrams)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.2)
    batch = enc.batch_words(SENTENCES)
    for _ in range(80):
        opt.zero_grad()
        model.loss(batch).backward()
        opt.step()
    torch.set_num_threads(threads)
    return Segmenter(model, enc)


def test_learned_and_round_trip(segmenter, tmp_path):
    assert segmenter.segment("我们在北京工作。") == ["我们", "在", "北京", "工作", "。"]
    segmenter.save(tmp_path / "seg")
    loaded = Segmenter.load(tmp_path / "seg")
    lines = ["今天北京天气很好。", "", "我们今天很好。"]
    assert loaded.segment_lines(lines) == segmenter.segment_lines(lines)
    assert sorted(p.name for p in (tmp_path / "seg").iterdir()) == [
        "bigrams.json", "chars.json", "config.json", "manifest.json", "model.safetensors"]
    # the format every stored segmenter carries (`hanzilm segment --model` must keep reading them)
    assert json.loads((tmp_path / "seg" / "config.json").read_text())["format"] == "hanzilm.segmenter/1"


def test_empty_lines_whitespace_and_unknown_characters(segmenter):
    out = segmenter.segment_lines(["", "   ", "我们 在北京", "龘龘𠀀我们"])
    assert out[0] == [] and out[1] == []
    assert "".join(out[2]) == "我们在北京" and out[2][0] == "我们"   # a space is a boundary and is dropped
    assert "".join(out[3]) == "龘龘𠀀我们"                           # unknown characters map to <unk>


def test_latin_digits_and_urls(segmenter):
    text = "访问http://www.example.com/a?b=1获取iPhone12和3.14以及1998年"
    words = segmenter.segment(text)
    assert "".join(words) == text
    assert "http://www.example.com/a?b=1" in words         # a URL is one word
    for run in ("iPhone12", "3.14", "1998"):              # never split inside (may join a neighbour)
        assert any(run in w for w in words), (run, words)


def test_allowed_tags_masks():
    mask = allowed_tags("看www.a.cn和ab1")
    assert mask[0].all()                                   # a Chinese character is free
    assert mask[1].tolist() == [True, False, False, False]  # the URL is one word: B ... E
    assert mask[8].tolist() == [False, False, True, False]
    assert mask[10, [B, M]].all() and not mask[10, [E, S]].any()   # a run may join its neighbours
    assert mask[12, [M, E]].all() and not mask[12, [B, S]].any()
    assert allowed_tags("中文") is None
    assert normalize("1998年A") == "１９９８年Ａ"


def test_long_lines_are_cut_and_kept_whole(segmenter):
    text = "我们在北京工作。" * 2000 + "今天" * 3000   # 22,000 characters, the tail without punctuation
    segmenter_small = Segmenter(segmenter.model, segmenter.encoder, max_piece=500, batch_chars=4096)
    pieces = list(segmenter_small._cut(text))
    assert max(map(len, pieces)) <= 500 and "".join(pieces) == text
    assert pieces[0].endswith("。")
    assert "".join(segmenter_small.segment(text)) == text


def test_stream_and_cli(segmenter, tmp_path, capsys):
    segmenter.save(tmp_path / "m")
    src = tmp_path / "in.txt"
    src.write_bytes("\ufeff我们在北京工作。\r\n\r\n今天很好。\n".encode("utf-8"))
    assert main(["segment", "--model", str(tmp_path / "m"), str(src)]) == 0
    assert capsys.readouterr().out.splitlines() == ["我们  在  北京  工作  。", "", "今天  很  好  。"]
    out = io.StringIO()
    assert segment_stream(segmenter, iter(["我们", "", "今天"] * 5), out, sep=" ", block=4) == 15
    assert out.getvalue().count("\n") == 15


def test_bad_encoding_names_the_line(tmp_path, capsys, segmenter):
    segmenter.save(tmp_path / "m")
    src = tmp_path / "gbk.txt"
    src.write_bytes("我们\n".encode("utf-8") + "北京\n".encode("gbk"))
    with pytest.raises(DataError, match=r"gbk\.txt, line 2: not valid UTF-8"):
        list(iter_lines(open(src, "rb"), str(src)))
    assert main(["segment", "--model", str(tmp_path / "m"), str(src)]) == 2
    assert "line 2: not valid UTF-8" in capsys.readouterr().err


def test_a_bad_line_leaves_every_line_before_it_written_in_any_block_size(tmp_path, capsys, segmenter):
    segmenter.save(tmp_path / "m")
    src = tmp_path / "mixed.txt"
    src.write_bytes("我们\n".encode("utf-8") * 2999 + "北京\n".encode("gbk") + "今天\n".encode("utf-8"))
    for mode in ([], ["--flush"]):
        assert main(["segment", "--model", str(tmp_path / "m"), *mode, str(src)]) == 2
        captured = capsys.readouterr()
        assert captured.out.splitlines() == ["我们"] * 2999, mode
        assert "line 3000: not valid UTF-8" in captured.err


def test_load_rejects_a_non_segmenter(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "config.json").write_text('{"format": "other"}')
    with pytest.raises(DataError, match="not a segmenter"):
        Segmenter.load(tmp_path / "x")


def test_decode_batches_group_lengths(segmenter):
    lines = ["我们" * n for n in (1, 50, 3, 200, 7)]
    small = Segmenter(segmenter.model, segmenter.encoder, batch_chars=256)
    assert small.segment_lines(lines) == [segmenter.segment(line) for line in lines]
    assert np.all([len("".join(w)) for w in small.segment_lines(lines)] == np.array([len(x) for x in lines]))


def _copy(src, dst):
    dst.mkdir()
    for f in src.iterdir():
        (dst / f.name).write_bytes(f.read_bytes())
    return dst


def test_a_damaged_or_swapped_segmenter_is_refused(segmenter, tmp_path):
    """Stored models are verified on load (issue 13, item 2): NaN weights, a vocabulary swapped in from another
    model, a truncated weights file; each a DataError naming the file."""
    import numpy as np
    from safetensors.numpy import load_file, save_file

    from hanzilm.errors import DataError, HanzilmError

    good = tmp_path / "good"
    segmenter.save(good)
    nan = _copy(good, tmp_path / "nan")
    weights = load_file(str(nan / "model.safetensors"))
    weights["w2.bias"] = np.full_like(weights["w2.bias"], np.nan)
    save_file(weights, str(nan / "model.safetensors"))
    with pytest.raises(DataError, match=r"nan/model.safetensors: its sha256 differs"):
        Segmenter.load(nan)
    (nan / "manifest.json").unlink()
    for engine in ("numpy", "torch"):
        with pytest.raises(HanzilmError, match=r"nan/model.safetensors: the weights hold NaN"):
            Segmenter.load(nan, engine=engine)
    swapped = _copy(good, tmp_path / "swapped")
    chars = json.loads((swapped / "chars.json").read_text())
    (swapped / "chars.json").write_text(json.dumps(chars[::-1] if isinstance(chars, list) else chars | {"x": 1}))
    with pytest.raises(DataError, match=r"swapped/chars.json: its sha256 differs"):
        Segmenter.load(swapped)


def test_the_papers_decoding_is_plain_viterbi_over_a_whole_chunk(segmenter):
    """The book's rows decode as Pei et al. do (`experiment.PAPER_DECODING`): the best tag path of the model's
    scores over each whole whitespace-separated chunk, with no rule keeping a URL or an ASCII run whole and no
    cut of a long chunk; the command line's segmenter keeps its rules."""
    from hanzilm.papers.mmtnn.experiment import PAPER_DECODING
    from hanzilm.papers.mmtnn.tags import tags_to_words
    from hanzilm.papers.mmtnn.viterbi import viterbi

    paper = Segmenter(segmenter.model, segmenter.encoder, **PAPER_DECODING)
    text = "我们在北京工作。" * 130 + "见https://example.com/a和abc123。"   # over 1,000 characters
    arrays = segmenter.encoder.arrays([text])
    with torch.no_grad():
        scores = segmenter.model.decode_scores(arrays)
    tags, _ = viterbi(np.asarray(scores, dtype=np.float32), np.array([len(text)]),
                      constrain=segmenter.model.spec.constrain)
    assert paper.segment(text) == tags_to_words(text, tags[0])
    assert "https://example.com/a" in segmenter.segment(text)   # the rules, where they apply


@pytest.mark.parametrize("tail", ["👨\u200d👩\u200d👧\u200d👦", "e\u0301\u0302\u0303\u0304", "https://example.com/a/b?c=1"])
def test_a_long_line_is_never_cut_inside_what_the_rules_keep_whole(segmenter, tail):
    """997 characters of Chinese without punctuation, then an emoji family, a combining sequence or a URL: the cut
    at max_piece (1,000) falls before it, not inside, and the output keeps it whole as in a short line."""
    text = "我们在北京工作" * 142 + "今天北" + tail + "很好"
    assert len(text) > 1000
    pieces = list(segmenter._cut(text))
    assert "".join(pieces) == text and any(tail in p for p in pieces)
    words = segmenter.segment(text)
    assert "".join(words) == text and any(tail in w for w in words)
    assert any(tail in w for w in segmenter.segment("今天北" + tail + "很好"))


# ---- linear time on any input ----------------------------------------------------------------------------------

LONG_RUNS = {"letters": "a", "digits": "7", "url-like": "www.a", "e-mail-like": "a.b", "at-signs": "a@",
             "emoji": "😀", "combining marks": "e\u0301", "chinese": "我们"}


def _growth(fn, unit: str, small: int = 10**4) -> float:
    """The time of `fn` on a run of 100 x `small` characters over the time of 100 runs of `small` (best of a
    few): about 1 when the time is linear in the run, about 100 when quadratic."""
    import time

    small, large = unit * (small // len(unit)), unit * (100 * small // len(unit))

    def best(call, repeat: int) -> float:
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            call()
            times.append(time.perf_counter() - t)
        return min(times)

    return best(lambda: fn(large), 2) / best(lambda: [fn(small) for _ in range(100)], 3)


@pytest.mark.parametrize("kind", LONG_RUNS)
def test_the_rules_take_time_linear_in_a_run_of_any_protected_class(kind):
    growth = _growth(allowed_tags, LONG_RUNS[kind])
    assert growth < 10, f"{kind}: a run 100 x as long took {100 * growth:.0f} x the time (quadratic: 10,000)"


@pytest.mark.parametrize("kind", ["letters", "e-mail-like"])
def test_a_long_run_is_segmented_in_time_linear_in_it(segmenter, kind):
    run = LONG_RUNS[kind] * (10**5 // len(LONG_RUNS[kind]))
    assert "".join(segmenter.segment(run)) == run
    growth = _growth(segmenter.segment, LONG_RUNS[kind], small=10**3)
    assert growth < 10, f"{kind}: a run 100 x as long took {100 * growth:.0f} x the time (quadratic: 10,000)"


def test_a_long_text_scored_along_it_is_segmented_as_in_one_batch(segmenter):
    rng = np.random.default_rng(0)
    pieces = ["我们", "北京", "工作", "abc123", "www.x.cn", "e\u0301", "。", "１９９８年", "很", "好"]
    text = "".join(rng.choice(pieces, 3000))
    whole = Segmenter(segmenter.model, segmenter.encoder, max_piece=None, batch_chars=10**6)
    along = Segmenter(segmenter.model, segmenter.encoder, max_piece=None, batch_chars=257)
    assert along.segment(text) == whole.segment(text)


def test_the_search_through_forced_stretches_is_the_search_step_by_step():
    from hanzilm.papers.mmtnn import viterbi as V

    rng = np.random.default_rng(1)
    for _ in range(200):
        length = int(rng.integers(2, 150))
        scores = rng.normal(size=(1, length, 5, 4)).astype(np.float32)
        allowed = np.ones((1, length, 4), dtype=bool)
        at = 0
        while at < length - 2:  # runs kept whole, as the rules make them: B (or M) M ... M (or E) E
            a = int(rng.integers(at, length - 1))
            b = min(length, a + int(rng.integers(2, 60)))
            allowed[0, a:b] = False
            allowed[0, a + 1:b - 1, M] = True
            allowed[0, a, [B, M] if rng.random() < 0.5 else B] = True
            allowed[0, b - 1, E] = True
            at = b + int(rng.integers(0, 5))
        fast = V.viterbi(scores, np.array([length]), allowed=allowed)
        plain = V.viterbi(scores, np.array([length]), allowed=allowed, jump=False)
        assert np.array_equal(fast[0], plain[0]) and fast[1] == plain[1]
