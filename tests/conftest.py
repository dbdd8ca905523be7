"""Shared fixtures: the embedded MiniLM pipeline, tiny random-weight Hugging Face models
saved offline, pipelines built around them, and multi-sentence sample text.

Fixtures other test modules rely on (keep the names):

* ``minilm_nlp``: the embedded MiniLM with the calibrated ``attn_segmenter``
  (``spacy_attnseg.load_pipeline("attention")``), built once per session. Do not change
  its components or configuration; withdraw any capture request a test adds
  (``capture.withdraw(name)``).
* ``default_nlp``: the default pipeline (``spacy_attnseg.load_pipeline()``: the shipped
  ``attn_senter`` and the topic segments), built once per session; do not modify it.
* ``tiny_model_dir``: a factory ``tiny_model_dir(model_type, **config_overrides) -> Path``
  saving a tiny random-weight ``bert``, ``distilbert`` or ``roberta`` model with its
  tokenizer to a session temporary folder (cached per arguments).
* ``build_nlp``: the helper :func:`build_trf_nlp` (transformer + attn_segmenter from a
  model folder, assembled with ``load_model_from_config(validate=True)`` and
  initialized).
* ``sample_text`` / ``sample_texts``: EWT test text long enough for several 128-token
  transformer windows, and a list of EWT documents of varied length.

Helpers: :func:`run_cli` runs ``python -m spacy_attnseg`` in this process (its own
standard streams, exit status and working directory; pipelines load once per process
as in one command's run) or, with ``process=True``, in a fresh interpreter;
:func:`load_script` loads a script of ``scripts/`` as a module; :func:`space_joined_pieces`
cuts a built topic document into its reference segments.
"""

from __future__ import annotations

import importlib.util
import io
import os
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest  # noqa: E402
import torch  # noqa: E402

# under pytest-xdist each worker has a core of its own
torch.set_num_threads(1 if os.environ.get("PYTEST_XDIST_WORKER") else 2)

REPO = Path(__file__).resolve().parents[1]
# The reproduction kit (paper/) is not installed; the package under test is the installed
# one, so the repository goes at the end of the path.
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))
DATA = REPO / "data"
SAMPLE_TXT = DATA / "sample.txt"
EWT_DIR = DATA / "UD_English-EWT"
EWT_TEST = EWT_DIR / "en_ewt-ud-test.conllu"
EWT_DEV = EWT_DIR / "en_ewt-ud-dev.conllu"
#: Three short texts on unrelated topics (four sentences each).
PIECES = [
    "The committee approved the new budget for the city library. Funding for books rose by "
    "ten percent. The library will also open on Sundays. Staff said readers had asked for "
    "longer hours.",
    "My cat refuses to eat dry food. She waits by the fridge every morning. The vet says "
    "she is healthy but spoiled. We bought a new bowl yesterday.",
    "The volcano erupted twice last week. Ash clouds closed the airport for two days. "
    "Scientists expect more activity this month. Villages near the crater were evacuated.",
]

TINY_MODEL_TYPES = ("bert", "distilbert", "roberta", "mpnet")
# Larger than the Hugging Face default (0.02) so that random attention is peaked rather
# than uniform and column sums differ across positions.
TINY_INIT_RANGE = 0.3
#: The size of every tiny model whose config takes BERT's names.
TINY_SIZES: Dict[str, Any] = {
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 64,
    "initializer_range": TINY_INIT_RANGE,
}


def ewt_texts(path: Path = EWT_TEST) -> List[str]:
    from paper.evaluation import read_conllu_documents

    return [doc.text for doc in read_conllu_documents(path)]


def load_script(name: str) -> Any:
    """The module of ``scripts/NAME.py`` (the scripts are no package), loaded afresh."""
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def space_joined_pieces(text: str, starts: Sequence[int]) -> List[str]:
    """The reference segments of a topic document built by ``paper.synthetic.build``
    (``starts`` their offsets), checked to be joined by single spaces."""
    ends = [start - 1 for start in starts[1:]] + [len(text)]
    pieces = [text[a:b] for a, b in zip(starts, ends, strict=True)]
    assert text == " ".join(pieces)
    return pieces


def long_sample_text(min_chars: int = 2000) -> str:
    """EWT test documents joined until the text has ``min_chars`` characters (about
    400 spaCy tokens: four strided 128-token windows)."""
    parts: List[str] = []
    for text in ewt_texts():
        if len(text) < 200:
            continue
        parts.append(text)
        if sum(len(p) + 1 for p in parts) >= min_chars:
            break
    return " ".join(parts)


@dataclass
class CliResult:
    """What a run of the command line gave: its exit status and what it wrote."""

    returncode: int
    stdout: str
    stderr: str


class Terminal(io.StringIO):
    """A text stream that says it is a terminal (progress bars draw on it)."""

    def isatty(self) -> bool:
        return True


#: The command line's environment in the tests: a wide terminal for typer's help and
#: error panels, no tokenizer threads.
CLI_ENV = {"TOKENIZERS_PARALLELISM": "false", "COLUMNS": "200"}


def exit_status(exit: SystemExit) -> int:
    """The status a process ends with on ``exit`` (``sys.exit(None)`` is 0, a message 1)."""
    return exit.code if isinstance(exit.code, int) else int(exit.code is not None)


@contextmanager
def _as_a_command(args: List[str], stdin: str, stderr: io.StringIO) -> Iterator[io.StringIO]:
    """This process set up as ``python -m spacy_attnseg ARGS`` run in the repository
    with ``stdin`` on standard input; yields its standard output. Restores argv, the
    streams, the working directory, the environment and torch's threads after."""
    saved = (sys.argv, sys.stdin, sys.stdout, sys.stderr, os.getcwd(), dict(os.environ))
    threads = torch.get_num_threads()
    stdout = io.StringIO()
    sys.argv = ["python -m spacy_attnseg", *args]
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode("utf8", "surrogatepass")), "utf8")
    sys.stdout, sys.stderr = stdout, stderr
    os.environ.update(CLI_ENV)
    os.chdir(REPO)
    try:
        yield stdout
    finally:
        sys.argv, sys.stdin, sys.stdout, sys.stderr = saved[:4]
        os.chdir(saved[4])
        os.environ.clear()
        os.environ.update(saved[5])
        torch.set_num_threads(threads)


def run_cli(
    args: List[str],
    stdin: Optional[str] = None,
    *,
    process: bool = False,
    tty: bool = False,
    env: Optional[Dict[str, str]] = None,
) -> CliResult:
    """Run ``python -m spacy_attnseg ARGS`` in the repository: in this process (its
    ``main()``, with stderr a terminal if ``tty``), or in a fresh interpreter with
    ``process=True`` (and ``env`` added to its environment); ``stdin`` is the text on
    standard input, and the output is read as UTF-8."""
    if process:
        done = subprocess.run(
            [sys.executable, "-m", "spacy_attnseg", *args],
            input=stdin,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=240,
            env=dict(os.environ, **CLI_ENV, **(env or {})),
            cwd=str(REPO),
        )
        return CliResult(done.returncode, done.stdout, done.stderr)
    from spacy_attnseg.cli import main

    stderr = Terminal() if tty else io.StringIO()
    code = 0
    with _as_a_command(args, stdin or "", stderr) as stdout:
        try:
            main()
        except SystemExit as exit:
            code = exit_status(exit)
    return CliResult(code, stdout.getvalue(), stderr.getvalue())


def minilm_vocab_file() -> Path:
    from spacy_attnseg.loading import embedded_model_path

    return Path(embedded_model_path()) / "vocab.txt"


def save_tiny_model(model_type: str, path: Path, **config_overrides: Any) -> Path:
    """Save a tiny random-weight model (2 layers, 4 heads, hidden 32) and its tokenizer
    to ``path`` without network access; returns ``path``."""
    from transformers import (
        BertConfig,
        BertModel,
        BertTokenizerFast,
        DistilBertConfig,
        DistilBertModel,
        DistilBertTokenizerFast,
        RobertaConfig,
        RobertaModel,
        RobertaTokenizerFast,
    )

    path.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    model: Any
    if model_type == "bert":
        tokenizer: Any = BertTokenizerFast(
            vocab_file=str(minilm_vocab_file()), model_max_length=512
        )
        config: Any = BertConfig(
            vocab_size=tokenizer.vocab_size,
            max_position_embeddings=512,
            **{**TINY_SIZES, **config_overrides},
        )
        model = BertModel(config)
    elif model_type == "distilbert":
        tokenizer = DistilBertTokenizerFast(
            vocab_file=str(minilm_vocab_file()), model_max_length=512
        )
        config = DistilBertConfig(
            vocab_size=tokenizer.vocab_size,
            dim=32,
            n_layers=2,
            n_heads=4,
            hidden_dim=64,
            max_position_embeddings=512,
            initializer_range=TINY_INIT_RANGE,
            **config_overrides,
        )
        model = DistilBertModel(config)
    elif model_type == "roberta":
        from tokenizers import ByteLevelBPETokenizer

        bpe = ByteLevelBPETokenizer()
        training_text = [SAMPLE_TXT.read_text(encoding="utf8")] + ewt_texts()[:20]
        bpe.train_from_iterator(
            training_text,
            vocab_size=600,
            min_frequency=1,
            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
        )
        bpe.save_model(str(path))
        tokenizer = RobertaTokenizerFast(
            vocab_file=str(path / "vocab.json"),
            merges_file=str(path / "merges.txt"),
            model_max_length=512,
        )
        config = RobertaConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
            max_position_embeddings=514,
            initializer_range=TINY_INIT_RANGE,
            pad_token_id=tokenizer.pad_token_id,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            **config_overrides,
        )
        model = RobertaModel(config)
    elif model_type == "mpnet":
        from transformers import MPNetConfig, MPNetModel

        # MPNet with a WordPiece tokenizer of the MiniLM vocabulary (padding id 0, which
        # MPNet's position ids must know); the model adds its relative position bias
        tokenizer = BertTokenizerFast(vocab_file=str(minilm_vocab_file()), model_max_length=512)
        config = MPNetConfig(
            vocab_size=tokenizer.vocab_size,
            max_position_embeddings=514,
            pad_token_id=tokenizer.pad_token_id,
            **{**TINY_SIZES, **config_overrides},
        )
        model = MPNetModel(config)
    else:
        raise ValueError(f"unknown tiny model type {model_type!r}")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


PIPELINE_CONFIG = """
[nlp]
lang = "en"
pipeline = ["transformer","attn_segmenter"]
batch_size = 32

[components]

[components.transformer]
factory = "transformer"
max_batch_items = 4096

[components.transformer.model]
@architectures = "spacy-transformers.TransformerModel.v3"
name = "unset"
mixed_precision = false
tokenizer_config = {"use_fast": true}
transformer_config = {}

[components.transformer.model.get_spans]
@span_getters = "spacy-transformers.strided_spans.v1"
window = 128
stride = 96

[components.attn_segmenter]
factory = "attn_segmenter"
transformer = "transformer"
layers = [-1]
heads = []
threshold = 0.5
candidates = "punct"
"""


def trf_pipeline_config(
    model_dir: Path | str,
    *,
    segmenter: Optional[Dict[str, Any]] = None,
    transformer_config: Optional[Dict[str, Any]] = None,
    max_batch_items: int = 4096,
    window: int = 128,
    stride: int = 96,
) -> Any:
    """The config of a transformer (``name`` = ``model_dir``) + attn_segmenter pipeline."""
    from thinc.api import Config

    config = Config().from_str(PIPELINE_CONFIG)
    trf = config["components"]["transformer"]
    trf["max_batch_items"] = max_batch_items
    trf["model"]["name"] = str(model_dir)
    trf["model"]["transformer_config"] = dict(transformer_config or {})
    trf["model"]["get_spans"]["window"] = window
    trf["model"]["get_spans"]["stride"] = stride
    config["components"]["attn_segmenter"].update(segmenter or {})
    return config


def build_trf_nlp(model_dir: Path | str, *, initialize: bool = True, **kwargs: Any) -> Any:
    """Assemble (``load_model_from_config(validate=True)``) and initialize a transformer +
    attn_segmenter pipeline; keyword arguments go to :func:`trf_pipeline_config`."""
    import spacy

    config = trf_pipeline_config(model_dir, **kwargs)
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    if initialize:
        nlp.initialize()
    return nlp


def transformer_only_nlp(model_dir: Path | str) -> Any:
    """A blank English pipeline with only a spacy-transformers ``transformer`` on
    ``model_dir`` (not initialized)."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe(
        "transformer",
        config={
            "model": {
                "@architectures": "spacy-transformers.TransformerModel.v3",
                "name": str(model_dir),
                "tokenizer_config": {"use_fast": True},
            }
        },
    )
    return nlp


@pytest.fixture(scope="session")
def minilm_nlp() -> Any:
    """The embedded MiniLM pipeline, shared by the session: do not modify it."""
    import spacy_attnseg

    return spacy_attnseg.load_pipeline("attention")


@pytest.fixture(scope="session")
def default_nlp() -> Any:
    """The default pipeline (shipped attn_senter + topic segments), shared by the
    session: do not modify it."""
    import spacy_attnseg

    return spacy_attnseg.load_pipeline()


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """Factory: ``tiny_model_dir("bert" | "distilbert" | "roberta", **config_overrides)``
    returns a folder holding a tiny random-weight model and its tokenizer."""
    cache: Dict[tuple, Path] = {}
    root = tmp_path_factory.mktemp("tiny_models")

    def make(model_type: str, **config_overrides: Any) -> Path:
        key = (model_type, tuple(sorted(config_overrides.items())))
        if key not in cache:
            name = model_type + "".join(f"-{k}={v}" for k, v in key[1])
            cache[key] = save_tiny_model(model_type, root / name, **config_overrides)
        return cache[key]

    return make


@pytest.fixture(scope="session")
def build_nlp() -> Callable[..., Any]:
    """The helper :func:`build_trf_nlp`."""
    return build_trf_nlp


@pytest.fixture(scope="session")
def sample_text() -> str:
    return long_sample_text()


@pytest.fixture(scope="session")
def sample_texts() -> List[str]:
    """Twelve EWT test documents of varied length: eleven of one window, then one of
    about 1,200 characters (several windows)."""
    by_length = sorted(ewt_texts(), key=len)
    step = max(1, len(by_length) // 12)
    multi_window = min(by_length, key=lambda text: abs(len(text) - 1200))
    return by_length[::step][:11] + [multi_window]
