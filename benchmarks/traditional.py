"""The shipped segmenter on traditional Chinese: the SIGHAN 2005 CityU and AS test sets (traditional script, Hong
Kong and Taiwan standards) segmented as they are and read through OpenCC's character table (`hanzilm segment`'s
default), each scored against its gold with the bakeoff scorer, beside jieba. The model learnt PKU's standard
from simplified text, so neither number is a CityU or AS result; the difference between the two is what the
reading of traditional characters buys.

    .venv/bin/python benchmarks/traditional.py [--model pku-mmtnn+pre] [--sets cityu as]
"""

from __future__ import annotations

import argparse

from hanzilm.data.resolve import dataset_paths
from hanzilm.eval.sighan import read_dictionary, read_words, score
from hanzilm.papers.mmtnn.commands import DEFAULT_MODEL, segmenter_dir
from hanzilm.papers.mmtnn.segmenter import Segmenter

SETS = {"cityu": ("seg/sighan2005/testing/cityu_test.utf8", "seg/sighan2005/gold/cityu_test_gold.utf8",
                  "seg/sighan2005/gold/cityu_training_words.utf8"),
        "as": ("seg/sighan2005/testing/as_test.utf8", "seg/sighan2005/gold/as_testing_gold.utf8",
               "seg/sighan2005/gold/as_training_words.utf8")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    args = parser.parse_args()
    files = dataset_paths("sighan2005")
    directory = segmenter_dir(args.model)
    systems = {"as written": Segmenter.load(directory, traditional=False).segment_lines,
               "through OpenCC's table": Segmenter.load(directory).segment_lines}
    try:
        import jieba

        jieba.setLogLevel(60)
        systems["jieba"] = lambda lines: [[w for w in jieba.cut(line) if not w.isspace()] for line in lines]
    except ImportError:
        pass
    print(f"model {args.model}; F and OOV recall of the bakeoff scorer against each set's gold")
    print(f"{'set':6} {'system':24} {'F':>6} {'OOV R':>6}")
    for name in args.sets:
        test, gold, words = (files[p] for p in SETS[name])
        lines = test.read_text(encoding="utf-8").splitlines()
        gold_words, dictionary = read_words(gold), read_dictionary(words)
        for system, segment in systems.items():
            result = score(dictionary, gold_words, segment(lines), allow_mismatch=True, mode="exact")
            print(f"{name:6} {system:24} {100 * result.total.f1:6.1f} {100 * result.total.oov_recall:6.1f}")


if __name__ == "__main__":
    main()
