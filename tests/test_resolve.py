from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import socket

import pytest

import hanzilm.data.resolve as resolve_module
from hanzilm.data import commands, load_manifest
from hanzilm.data.resolve import checksums, dataset_paths, resolve
from hanzilm.errors import DataError, HanzilmError

GOLD = "迈向  充满  希望  的  新  世纪\r\n".encode()
WORDS = "研习班\n义演\n".encode()
TOY = {"toy/gold/pku_test_gold.utf8": GOLD, "toy/gold/pku_training_words.utf8": WORDS}
ONE = {"one/only.txt": b"single\n"}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def cache_files(data_env) -> list:
    return [p for p in (data_env / "cache").rglob("*") if p.is_file()]


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_resolve_module_is_not_shadowed_by_the_function():
    # hanzilm.results and its tests reach checksums() through the module; a package-level re-export of the
    # function resolve() would shadow the module and silently defeat their monkeypatching
    assert inspect.ismodule(resolve_module)


# --- local places ----------------------------------------------------------------------------------------


def test_mirror_env_hit_by_full_path_and_suffix(toy_mirror, monkeypatch):
    mirror = toy_mirror({"toy": TOY, "one": ONE})
    monkeypatch.setenv("HANZILM_DATA_MIRROR", str(mirror))
    full = resolve("toy", "toy/gold/pku_test_gold.utf8")
    assert full == mirror / "toy/gold/pku_test_gold.utf8"
    assert resolve("toy", "pku_test_gold.utf8") == full
    assert resolve("toy", "gold/pku_test_gold.utf8") == full
    assert resolve("one") == mirror / "one/only.txt"
    assert dataset_paths("toy") == {p: mirror / p for p in TOY}
    assert checksums(["toy", "one"]) == {p: sha(b) for p, b in {**TOY, **ONE}.items()}


def test_shared_data_fallback_and_mirror_precedence(toy_mirror, monkeypatch, tmp_path):
    shared = toy_mirror({"one": ONE})
    monkeypatch.setenv("HANZILM_SHARED_DATA", str(shared))
    assert resolve("one") == shared / "one/only.txt"
    other = tmp_path / "other"
    (other / "one").mkdir(parents=True)
    (other / "one/only.txt").write_bytes(ONE["one/only.txt"])
    monkeypatch.setenv("HANZILM_DATA_MIRROR", str(other))
    assert resolve("one") == other / "one/only.txt"


def test_which_file_errors(toy_mirror, monkeypatch):
    twins = {"twins/a/x.txt": b"a\n", "twins/b/x.txt": b"b\n"}
    monkeypatch.setenv("HANZILM_DATA_MIRROR", str(toy_mirror({"toy": TOY, "twins": twins})))
    with pytest.raises(DataError, match="has 2 files; name one of: toy/gold/pku_test_gold.utf8"):
        resolve("toy")
    with pytest.raises(DataError, match="has no file 'msr_test_gold.utf8'"):
        resolve("toy", "msr_test_gold.utf8")
    with pytest.raises(DataError, match="has no file 'utf8'"):
        resolve("toy", "utf8")  # a suffix is whole path components, not part of a name
    with pytest.raises(DataError, match="'x.txt' is ambiguous in dataset 'twins'"):
        resolve("twins", "x.txt")
    assert resolve("twins", "b/x.txt").read_bytes() == b"b\n"


def test_unknown_dataset_lists_the_known_ones(toy_mirror):
    toy_mirror({"toy": TOY, "one": ONE})
    with pytest.raises(DataError, match="unknown dataset 'nope'; known datasets: one, toy"):
        resolve("nope")
    with pytest.raises(DataError, match="unknown dataset"):
        load_manifest().get("nope")


def test_checksum_mismatch_names_file_and_both_hashes(toy_mirror, monkeypatch):
    mirror = toy_mirror({"toy": TOY})
    monkeypatch.setenv("HANZILM_DATA_MIRROR", str(mirror))
    bad = bytearray(GOLD)
    bad[0] ^= 1
    (mirror / "toy/gold/pku_test_gold.utf8").write_bytes(bytes(bad))
    with pytest.raises(DataError) as err:
        resolve("toy", "pku_test_gold.utf8")
    message = str(err.value)
    assert "toy/gold/pku_test_gold.utf8" in message
    assert sha(GOLD) in message and sha(bytes(bad)) in message


def test_missing_file_lists_every_place_looked(toy_mirror, monkeypatch, data_env):
    toy_mirror({"toy": TOY}, write=False)
    empty = data_env / "empty_mirror"
    empty.mkdir()
    monkeypatch.setenv("HANZILM_DATA_MIRROR", str(empty))
    url = closed_port_url()
    monkeypatch.setenv("HANZILM_DATA_URL", url)
    with pytest.raises(DataError) as err:
        resolve("toy", "pku_test_gold.utf8")
    message = str(err.value)
    assert "dataset 'toy': file toy/gold/pku_test_gold.utf8 not found" in message
    assert str(empty / "toy/gold/pku_test_gold.utf8") in message
    assert "$HANZILM_SHARED_DATA is empty" in message
    assert str(data_env / "cache" / "downloads" / "toy/gold/pku_test_gold.utf8") in message
    assert f"{url}/toy/gold/pku_test_gold.utf8" in message and "refused" in message.lower()
    assert "hanzilm data fetch toy" in message and "HANZILM_DATA_MIRROR" in message
    assert cache_files(data_env) == []


def test_missing_file_without_any_url(toy_mirror):
    toy_mirror({"toy": TOY}, write=False)
    with pytest.raises(DataError, match=r"(?s)\$HANZILM_DATA_MIRROR: not set.*no download URL"):
        resolve("toy", "pku_test_gold.utf8")


def test_dataset_that_could_not_be_obtained(toy_mirror):
    note = "only distributed on a platform we cannot reach"
    toy_mirror({"toy": TOY, "gone": {}}, extra={"gone": {"missing": True, "note": note}})
    for call in (lambda: resolve("gone"), lambda: dataset_paths("gone"), lambda: checksums(["gone"])):
        with pytest.raises(DataError, match=f"'gone' could not be obtained: {note}"):
            call()


def test_repeated_resolution_hashes_once(toy_mirror, monkeypatch):
    monkeypatch.setenv("HANZILM_DATA_MIRROR", str(toy_mirror({"one": ONE})))
    calls = []
    real = resolve_module.file_sha256
    monkeypatch.setattr(resolve_module, "file_sha256", lambda p: calls.append(p) or real(p))
    for _ in range(5):
        resolve("one")
    assert len(calls) == 1


# --- downloads -------------------------------------------------------------------------------------------


def serve(served, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (served / rel).parent.mkdir(parents=True, exist_ok=True)
        (served / rel).write_bytes(data)


def test_download_from_local_server_lands_in_cache(toy_mirror, http_mirror, monkeypatch, data_env):
    toy_mirror({"toy": TOY}, write=False)
    served, url = http_mirror
    serve(served, TOY)
    monkeypatch.setenv("HANZILM_DATA_MIRROR", str(data_env / "mirror"))  # exists, but empty
    monkeypatch.setenv("HANZILM_DATA_URL", url)
    path = resolve("toy", "pku_test_gold.utf8")
    assert path == data_env / "cache" / "downloads" / "toy/gold/pku_test_gold.utf8"
    assert path.read_bytes() == GOLD
    # once cached, the server is no longer needed
    (served / "toy/gold/pku_test_gold.utf8").unlink()
    monkeypatch.setenv("HANZILM_DATA_URL", closed_port_url())
    assert resolve("toy", "pku_test_gold.utf8") == path


def test_download_with_wrong_bytes_leaves_nothing_in_cache(toy_mirror, http_mirror, monkeypatch, data_env):
    toy_mirror({"toy": TOY}, write=False)
    served, url = http_mirror
    serve(served, {**TOY, "toy/gold/pku_test_gold.utf8": GOLD + b"extra\r\n"})
    monkeypatch.setenv("HANZILM_DATA_URL", url)
    with pytest.raises(DataError) as err:
        resolve("toy", "pku_test_gold.utf8")
    assert sha(GOLD) in str(err.value) and sha(GOLD + b"extra\r\n") in str(err.value)
    assert cache_files(data_env) == []


def test_download_http_error_is_reported(toy_mirror, http_mirror, monkeypatch, data_env):
    toy_mirror({"toy": TOY}, write=False)
    monkeypatch.setenv("HANZILM_DATA_URL", http_mirror[1])  # serves nothing: 404
    with pytest.raises(DataError, match="404"):
        resolve("toy", "pku_test_gold.utf8")
    assert cache_files(data_env) == []


# --- the manifest ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change, problem",
    [
        (lambda f: f.update(sha256="abc"), "sha256 must be 64"),
        (lambda f: f.update(path="../outside.txt"), "must be relative"),
        (lambda f: f.update(path="/etc/passwd"), "must be relative"),
        (lambda f: f.pop("bytes"), "bytes"),
    ],
)
def test_invalid_manifest_is_a_data_error(toy_mirror, data_env, change, problem):
    toy_mirror({"one": ONE})
    manifest = data_env / "manifest.json"
    raw = json.loads(manifest.read_text())
    change(raw["datasets"][0]["files"][0])
    manifest.write_text(json.dumps(raw))
    with pytest.raises(DataError, match=problem) as err:
        load_manifest()
    assert str(manifest) in str(err.value)


def test_project_manifest_is_consistent():
    manifest = load_manifest(resolve_module.ROOT / "data" / "manifest.json")
    assert "sighan2005" in manifest.datasets and manifest.get("wplc").missing
    for ds in manifest.datasets.values():
        assert ds.stand_in == (ds.name in {"pku_training_pd199801", "msr_training_sample"} or ds.name.startswith("lm_"))
        assert (ds.genre is not None) == ds.name.startswith("lm_")
    assert manifest.get("lm_ugc_reviews").one_document_per_line


# --- the commands ----------------------------------------------------------------------------------------


def run_data_command(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="hanzilm")
    commands.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["data", *argv])
    return args.func(args)


def test_cli_list(toy_mirror, monkeypatch, capsys):
    monkeypatch.setenv("HANZILM_DATA_MIRROR", str(toy_mirror({"toy": TOY, "one": ONE})))
    assert run_data_command("list") == 0
    out = capsys.readouterr().out
    assert "resolves from" in out and "toy" in out and "mirror" in out


def test_cli_verify_reports_mismatch_and_missing(toy_mirror, monkeypatch, capsys):
    mirror = toy_mirror({"toy": TOY, "one": ONE})
    monkeypatch.setenv("HANZILM_DATA_MIRROR", str(mirror))
    assert run_data_command("verify") == 0
    (mirror / "one/only.txt").write_bytes(b"changed\n")
    (mirror / "toy/gold/pku_training_words.utf8").unlink()
    assert run_data_command("verify") == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and "MISSING" in out
    with pytest.raises(HanzilmError, match="unknown dataset"):
        run_data_command("verify", "nope")


def test_cli_fetch_downloads(toy_mirror, http_mirror, monkeypatch, data_env, capsys):
    toy_mirror({"toy": TOY}, write=False)
    served, url = http_mirror
    serve(served, TOY)
    monkeypatch.setenv("HANZILM_DATA_URL", url)
    assert run_data_command("fetch", "toy") == 0
    assert len(cache_files(data_env)) == 2
    assert "2 from cache" in capsys.readouterr().out


def test_cli_verify_real_sighan2005(real_mirror, capsys):
    assert run_data_command("verify", "sighan2005") == 0
    assert "14 files checked, 0 problem(s)" in capsys.readouterr().out


def test_cli_main_entry_point(real_mirror, capsys):
    pytest.importorskip("hanzilm.runner", reason="hanzilm.runner (imported by cli.main) is not written yet")
    from hanzilm.cli import main

    assert main(["data", "list"]) == 0
    assert "sighan2005" in capsys.readouterr().out
    assert main(["data", "verify", "nope"]) == 2


def test_a_mirror_that_is_not_a_directory_is_an_error(toy_mirror, monkeypatch, tmp_path):
    """A mistyped $HANZILM_DATA_MIRROR is one error naming it, not a silent fall through to ../shared/data."""
    toy_mirror({"toy": TOY})
    monkeypatch.setenv("HANZILM_DATA_MIRROR", str(tmp_path / "mirorr"))
    with pytest.raises(DataError, match=r"mirorr.*HANZILM_DATA_MIRROR is set, but is not a directory"):
        resolve("toy", "pku_test_gold.utf8")


def test_cli_verify_counts_a_dataset_not_obtained_alike_however_called(real_mirror, capsys):
    """`data verify wplc` and `data verify` report the documented absence the same way: not a problem."""
    assert run_data_command("verify", "wplc") == 0
    alone = capsys.readouterr().out.splitlines()
    assert alone[-1] == "0 files checked, 0 problem(s), 1 dataset(s) not obtained"
    assert run_data_command("verify") == 0
    everything = capsys.readouterr().out.splitlines()
    assert alone[0] in everything and everything[-1].endswith("0 problem(s), 1 dataset(s) not obtained")
