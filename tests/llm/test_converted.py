"""The converted copy's folder: named by the GGUF file's bytes, published whole or not at all."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from sg_search.llm.converted import DONE_MARKER, converted_folder, load_model, publish


def _gguf(tmp_path: Path, content: bytes) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(content)
    return path


def test_the_folder_is_named_by_the_file_and_changes_with_its_bytes(tmp_path: Path) -> None:
    first = converted_folder(_gguf(tmp_path, b"GGUF one"), tmp_path / "cache")
    assert first.parent == tmp_path / "cache" / "converted" and first.name.startswith("model-")
    assert converted_folder(_gguf(tmp_path, b"GGUF one"), tmp_path / "cache") == first
    assert converted_folder(_gguf(tmp_path, b"GGUF two"), tmp_path / "cache") != first


def test_a_folder_is_published_whole_with_its_marker_written_last(tmp_path: Path) -> None:
    folder = tmp_path / "converted" / "m-1"
    seen_during_write: list[bool] = []

    def write(staging: Path) -> None:
        (staging / "model.safetensors").write_bytes(b"weights")
        seen_during_write.append(folder.exists())

    assert publish(folder, write, tmp_path / "m.gguf")
    assert seen_during_write == [False]  # readers never saw a half-written folder
    assert sorted(p.name for p in folder.iterdir()) == [DONE_MARKER, "model.safetensors"]
    assert [p.name for p in folder.parent.iterdir()] == ["m-1"]  # no staging folder left


def test_a_write_that_fails_leaves_nothing_and_says_the_next_load_converts_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "converted" / "m-1"

    def write(staging: Path) -> None:
        (staging / "model.safetensors").write_bytes(b"half")
        raise OSError(28, "No space left on device")

    with caplog.at_level(logging.WARNING):
        assert not publish(folder, write, tmp_path / "m.gguf")
    assert not folder.exists() and list(folder.parent.iterdir()) == []
    assert "No space left on device" in caplog.text and "converts again" in caplog.text


def test_a_second_converter_keeps_the_first_copy_and_says_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "converted" / "m-1"
    assert publish(folder, lambda s: (s / "a").write_text("first"), tmp_path / "m.gguf")
    with caplog.at_level(logging.WARNING):
        assert not publish(folder, lambda s: (s / "a").write_text("second"), tmp_path / "m.gguf")
    assert (folder / "a").read_text() == "first" and not caplog.text
    assert [p.name for p in folder.parent.iterdir()] == ["m-1"]


def test_a_broken_copy_is_named_and_the_gguf_file_is_read_instead(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    gguf = _gguf(tmp_path, b"not a GGUF file")
    folder = converted_folder(gguf, tmp_path / "cache")
    folder.mkdir(parents=True)
    (folder / DONE_MARKER).write_text("{}\n")  # published, but its files are gone
    with caplog.at_level(logging.WARNING), pytest.raises(ValueError, match="not a GGUF file"):
        load_model(gguf, tmp_path / "cache")  # the file itself is then read: not a GGUF
    assert f"the converted copy {folder} does not load" in caplog.text and "delete it" in caplog.text
