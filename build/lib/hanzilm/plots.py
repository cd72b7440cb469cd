"""Figures that show Chinese: `use_cjk_font()` (called by `notebook.start`) registers Noto Sans CJK SC with
matplotlib, so axis labels and titles can be written in characters.

The font comes from a pinned PyPI package (`noto-cjk-sans-otc`, the Noto Sans CJK collection, SIL OFL) rather
than from the system, so every machine that installs the project draws the same glyphs. DejaVu Sans stays the
first family: Latin text and digits look as before, and matplotlib falls back to the CJK face glyph by glyph."""

from __future__ import annotations

from pathlib import Path

CJK_FAMILY = "Noto Sans CJK SC"
LATIN_FAMILY = "DejaVu Sans"  # matplotlib's own default, shipped with it


def cjk_font_path() -> Path:
    """The font collection file (one .ttc holding the SC, TC, JP, KR and HK faces)."""
    import noto_cjk_sans_otc

    return Path(str(noto_cjk_sans_otc.FONT_PATH))


def use_cjk_font() -> None:
    """Draw text in DejaVu Sans, with Noto Sans CJK SC for the characters DejaVu Sans lacks."""
    import matplotlib
    from matplotlib import font_manager

    fm = font_manager.fontManager
    # only the pinned file under this name: a system copy (Debian's fonts-noto-cjk, say) would make the
    # figures depend on the machine
    fm.ttflist = [f for f in fm.ttflist if f.name != CJK_FAMILY]
    fm.addfont(str(cjk_font_path()))  # every face of the collection; clears matplotlib's font lookup cache
    # a list of named families, not the generic "sans-serif": matplotlib falls back glyph by glyph only
    # along font.family, and a generic family resolves to a single font
    matplotlib.rcParams["font.family"] = [LATIN_FAMILY, CJK_FAMILY]
