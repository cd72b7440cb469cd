"""Test helper: a call made in a process whose oneDNN may use the CPU's bf16 instructions. The tests cap oneDNN at
AVX2 (conftest), where it has no bf16 LSTM, and the cap is read when the library loads, hence a process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from hanzilm.machine import ONEDNN_ISA_VARS


def call(module: str, function: str, *args: str) -> Any:
    """`module.function(*args)` (a module of tests/) in an uncapped process, its JSON result read back."""
    env = {k: v for k, v in os.environ.items() if k not in ONEDNN_ISA_VARS} | {"HANZILM_PROGRESS": "0"}
    code = (f"import json, sys; import {module} as m; from hanzilm.machine import cpu_has_bf16; "
            f"assert cpu_has_bf16(); print(json.dumps(m.{function}(*sys.argv[1:])))")
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=Path(__file__).parent,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])
