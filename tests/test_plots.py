"""Book figures show Chinese characters: `use_cjk_font` gives matplotlib the pinned Noto Sans CJK SC."""

import dataclasses
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from matplotlib.ft2font import FT2Font  # noqa: E402

from hanzilm.papers.backpack import prompts  # noqa: E402
from hanzilm.plots import CJK_FAMILY, cjk_font_path, use_cjk_font  # noqa: E402

# what the Backpack figures label their axes with, and the example of the issue
SHOWN = "士兵 警察 演员 教师 的 " + "".join(prompts.SENSE_CHARACTERS) + "".join(prompts.AMPLIFY_TARGETS["沙滩"]) + "沙滩"


def _draw(text: str) -> list[str]:
    """Draw a figure with `text` as tick labels and title; the warnings matplotlib gave."""
    fig, ax = plt.subplots()
    words = text.split()
    ax.set_xticks(range(len(words)), words)
    ax.set_title(text)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.canvas.draw()
    plt.close(fig)
    return [str(w.message) for w in caught]


def _sc_face(path) -> FT2Font:
    collection = FT2Font(str(path))
    for i in range(collection.num_faces):
        face = FT2Font(str(path), face_index=i)
        if face.family_name == CJK_FAMILY:
            return face
    raise AssertionError(f"{path} has no {CJK_FAMILY} face")


def test_the_font_file_covers_the_characters_the_figures_show():
    charmap = _sc_face(cjk_font_path()).get_charmap()
    missing = [c for c in SHOWN if not c.isspace() and ord(c) not in charmap]
    assert not missing


def test_a_figure_with_chinese_draws_every_glyph():
    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        assert any("missing from font" in w for w in _draw(SHOWN))  # the default font has none: the check bites
        use_cjk_font()
        assert not [w for w in _draw(SHOWN) if "missing from font" in w]
        fonts = font_manager.fontManager._find_fonts_by_props(font_manager.FontProperties())
        assert str(cjk_font_path()) in [str(f) for f in fonts]


def test_latin_text_keeps_the_default_font():
    with matplotlib.rc_context():
        use_cjk_font()
        first = font_manager.findfont(font_manager.FontProperties(family=matplotlib.rcParams["font.family"][0]))
        assert first.endswith("DejaVuSans.ttf")


def test_a_system_font_of_the_same_name_does_not_replace_the_pinned_one(monkeypatch):
    fm = font_manager.fontManager
    monkeypatch.setattr(fm, "ttflist", list(fm.ttflist))
    impostor = dataclasses.replace(fm.ttflist[0], name=CJK_FAMILY)  # some other file, under the same name
    fm.ttflist.insert(0, impostor)
    with matplotlib.rc_context():
        use_cjk_font()
        use_cjk_font()  # idempotent: still exactly the pinned faces
        found = font_manager.findfont(font_manager.FontProperties(family=CJK_FAMILY), fallback_to_default=False)
    assert found == str(cjk_font_path())
    assert all(f.fname == str(cjk_font_path()) for f in fm.ttflist if f.name == CJK_FAMILY)
    assert sum(f.name == CJK_FAMILY for f in fm.ttflist) == 1


@pytest.mark.parametrize("source", ["table2_senses", "table5_bias", "table6_amplification"])
def test_book_figures_no_longer_transliterate(source):
    from hanzilm.paths import BOOK

    text = (BOOK / "backpack" / f"{source}.py").read_text()
    assert ".pinyin(" not in text
