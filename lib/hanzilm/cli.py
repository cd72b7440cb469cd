"""The `hanzilm` command. Each subcommand lives beside the code it drives and registers itself here; this module
sits above the papers (like the book), so it is the one shared module that imports paper packages.

Registering imports only the commands' argument definitions: numpy, torch and pandas are imported by the command
that runs, so `hanzilm --help` and `hanzilm score` start in a fraction of a second."""

from __future__ import annotations

import argparse
import sys

from .cliutil import run


DESCRIPTION = ("Re-run three papers on character-level Chinese neural models (the book: `hanzilm paper run`), and "
               "use what they train: segment text, score a segmentation, read a Backpack's senses.")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hanzilm")
    except PackageNotFoundError:  # run from a checkout that was never installed
        from . import __version__

        return __version__


def main(argv: list[str] | None = None) -> int:
    return run(lambda: _dispatch(argv))


def _dispatch(argv: list[str] | None) -> int:
    from . import runner
    from .data import commands as data_commands
    from .eval import commands as score_commands
    from . import models
    from .papers.backpack import commands as senses_commands
    from .papers.mmtnn import commands as segment_commands
    from .papers.mslm import commands as slm_commands

    parser = argparse.ArgumentParser(prog="hanzilm", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"hanzilm {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    data_commands.register(sub)
    runner.register(sub, chapter_plans)
    score_commands.register(sub)
    segment_commands.register(sub)
    senses_commands.register(sub)
    models.register(sub, {**senses_commands.MODEL_NAMES, **segment_commands.MODEL_NAMES, **slm_commands.MODEL_NAMES})
    args = parser.parse_args(argv)
    return args.func(args)


def chapter_plans() -> dict:
    """Each chapter's `plan(profile)` (`hanzilm paper run --plan`), imported here, above the papers."""
    from .papers.backpack import plan as backpack
    from .papers.mmtnn import plan as mmtnn
    from .papers.mslm import plan as mslm

    return {"backpack": backpack.plan, "mslm": mslm.plan, "mmtnn": mmtnn.plan}


if __name__ == "__main__":
    sys.exit(main())
