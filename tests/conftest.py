"""Data-layer fixtures: an isolated resolver environment, toy mirrors with their own manifest, a local HTTP
server, and access to the real data mirror (tests that need it skip when it is absent)."""

from __future__ import annotations

import os

from hanzilm.machine import portable_float_env

# Before any test imports torch or NumPy, and inherited by the kernels nbval starts: the smoke notebooks were
# executed with the same floating-point code paths (runner.execute), so they compare equal on any x86-64 CPU.
os.environ.update(portable_float_env())

import functools
import hashlib
import http.server
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hanzilm.data.resolve import MIRROR_ENV, shared_data_dir


@pytest.fixture
def data_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No mirror, no shared data, no base URL, a fresh cache under tmp_path; returns tmp_path."""
    for var in ("HANZILM_DATA_MIRROR", "HANZILM_DATA_URL", "HANZILM_MANIFEST"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HANZILM_SHARED_DATA", "")
    monkeypatch.setenv("HANZILM_CACHE", str(tmp_path / "cache"))
    # the local test server must never be reached through a proxy from the environment
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    return tmp_path


def manifest_entry(name: str, files: dict[str, bytes], **extra: object) -> dict:
    return {
        "name": name,
        "description": f"test dataset {name}",
        "licence": "test",
        "upstream": f"https://example.org/{name}",
        "stand_in": False,
        "stand_in_note": None,
        **extra,
        "files": [
            {"path": p, "sha256": hashlib.sha256(b).hexdigest(), "bytes": len(b), "url": None}
            for p, b in files.items()
        ],
    }


@pytest.fixture
def toy_mirror(data_env: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    """make({name: {path: bytes}}, extra={name: {field: value}}, write=True) writes a manifest for those
    datasets, points $HANZILM_MANIFEST at it and returns a mirror directory holding the files (empty with
    write=False). The mirror is not configured as a place to look: each test chooses how to reach it."""

    def make(
        datasets: dict[str, dict[str, bytes]], *, extra: dict[str, dict] | None = None, write: bool = True
    ) -> Path:
        mirror = data_env / "mirror"
        mirror.mkdir(exist_ok=True)
        entries = [manifest_entry(name, files, **(extra or {}).get(name, {})) for name, files in datasets.items()]
        for files in datasets.values() if write else ():
            for rel, data in files.items():
                (mirror / rel).parent.mkdir(parents=True, exist_ok=True)
                (mirror / rel).write_bytes(data)
        manifest = data_env / "manifest.json"
        manifest.write_text(json.dumps({"manifest_version": 1, "datasets": entries}), encoding="utf-8")
        monkeypatch.setenv("HANZILM_MANIFEST", str(manifest))
        return mirror

    return make


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def http_mirror(data_env: Path) -> Iterator[tuple[Path, str]]:
    """A threaded HTTP server on 127.0.0.1 serving a fresh directory: yields (directory, base URL)."""
    served = data_env / "served"
    served.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # a short poll interval keeps shutdown() quick at teardown
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield served, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def real_mirror(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The real data mirror with the project's manifest; skips when no mirror is present."""
    monkeypatch.delenv("HANZILM_MANIFEST", raising=False)
    root = Path(os.environ[MIRROR_ENV]) if os.environ.get(MIRROR_ENV) else shared_data_dir()
    if root is None or not (root / "seg" / "sighan2005").is_dir():
        pytest.skip(f"the data mirror is not present (looked at {root}; set ${MIRROR_ENV})")
    return root
