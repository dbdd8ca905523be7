"""Command line: ``python -m spacy_attnseg segment|calibrate ...``."""

import json
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, TextIO, cast

import typer

from .errors import Errors

app = typer.Typer(
    name="spacy_attnseg",
    help="Sentence boundaries and head analysis from a transformer's own attention.",
    no_args_is_help=True,
    add_completion=False,
)

MODEL_HELP = (
    "A shipped pipeline by name (default: trained attn_senter sentences + topic segments; "
    "attention: the calibrated attn_segmenter alone; paper: the paper's recipe), a saved "
    "pipeline directory or a config (.cfg). All run on the embedded MiniLM by default."
)


def _open_input(path: str) -> TextIO:
    if path == "-":
        return sys.stdin
    file = Path(path)
    if not file.exists():
        raise typer.BadParameter(f"input file {path} does not exist")
    return file.open(encoding="utf8")


def _read_jsonl(handle: TextIO) -> Iterator[str]:
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise typer.BadParameter(f"line {number} is not JSON: {e}") from None
        if not isinstance(record, dict) or not isinstance(record.get("text"), str):
            raise typer.BadParameter(f'line {number} has no string field "text"')
        yield record["text"]


@app.command("segment")
def segment_cli(
    input: str = typer.Argument(..., help="A UTF-8 text file, or - for standard input."),
    model: str = typer.Option("default", "--model", "-m", help=MODEL_HELP),
    format: str = typer.Option(
        "text", "--format", "-f", help="text: one sentence a line; jsonl: JSON lines."
    ),
    batch_size: int = typer.Option(16, "--batch-size", help="Documents per batch."),
) -> None:
    """Split text into sentences (by default with the shipped attn_senter).

    With --format text the whole input is one document and each sentence is printed on
    its own line. With --format jsonl each input line is a JSON object with a "text"
    field; each output line is {"text", "sents": [{"start", "end", "score"}]} with
    character offsets into that text and how sure the sentence ends there
    (``sentences.sentence_end_scores``).
    """
    from .loading import load_pipeline
    from .sentences import sentence_end_scores

    if format not in ("text", "jsonl"):
        raise typer.BadParameter("--format must be 'text' or 'jsonl'")
    handle = _open_input(input)
    nlp = load_pipeline(model)
    with handle:
        if format == "text":
            doc = nlp(handle.read())
            for sent in doc.sents:
                text = " ".join(sent.text.split())
                if text:
                    typer.echo(text)
            return
        texts = _read_jsonl(handle)
        for doc in nlp.pipe(texts, batch_size=batch_size):
            scores = sentence_end_scores(doc)
            sents = (
                [
                    {
                        "start": sent.start_char,
                        "end": sent.end_char,
                        "score": round(score, 4),
                    }
                    for sent, score in zip(doc.sents, scores, strict=True)
                ]
                if len(doc)
                else []
            )
            typer.echo(json.dumps({"text": doc.text, "sents": sents}, ensure_ascii=False))


def _progress(iterable: Iterable[Any], *, quiet: bool, unit: str = "doc") -> Iterable[Any]:
    """A progress bar with docs/s on stderr, shown when stderr is a terminal."""
    from tqdm import tqdm

    disable = quiet or not sys.stderr.isatty()
    return cast(Iterable[Any], tqdm(iterable, unit=unit, disable=disable, file=sys.stderr))


@app.command("chunk")
def chunk_cli(
    input: str = typer.Argument(
        ..., help='JSON lines with a "text" field (or a .txt file), - for standard input.'
    ),
    max_tokens: int = typer.Option(
        256, "--max-tokens", help="Most model wordpieces in a chunk (0: no limit)."
    ),
    min_sents: int = typer.Option(2, "--min-sents", help="Fewest sentences in a chunk."),
    max_sents: int = typer.Option(0, "--max-sents", help="Most sentences (0: no limit)."),
    n_segments: int = typer.Option(0, "--segments", help="Chunks per document (0: auto)."),
    penalty: Optional[float] = typer.Option(
        None, "--penalty", help="Cost of a boundary (higher: fewer chunks; default: the model's)."
    ),
    model: str = typer.Option("default", "--model", "-m", help=MODEL_HELP),
    batch_size: int = typer.Option(8, "--batch-size", help="Documents per batch."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Cut documents into topic chunks for retrieval, from the transformer's own pass.

    Writes one JSON line per chunk: {"doc", "chunk", "text", "start", "end", "n_tokens",
    "n_sents", "score"}: character offsets into the document's text, the chunk's size in
    model wordpieces, and the score of the boundary that starts it (how much the topic
    changes there, over the cost of a boundary: about 1 or more for a boundary chosen on
    its own, possibly less for one that --max-tokens or --max-sents forced; 0.0 for a
    document's first chunk and a cut inside a sentence). Joined in order, the chunks'
    texts give the input text back.
    """
    from .components.segmenter import AttnSegmenter
    from .loading import load_pipeline

    overrides: Dict[str, Any] = {
        "components.attn_segmenter.max_tokens": max_tokens,
        "components.attn_segmenter.min_sents": min_sents,
        "components.attn_segmenter.max_sents": max_sents,
        "components.attn_segmenter.n_segments": n_segments,
    }
    if penalty is not None:
        overrides["components.attn_segmenter.segment_penalty"] = penalty
    nlp = load_pipeline(model, overrides=overrides)
    if "attn_segmenter" not in nlp.pipe_names:
        raise typer.BadParameter(Errors.E016.format(pipe_names=nlp.pipe_names))
    segmenter = cast(AttnSegmenter, nlp.get_pipe("attn_segmenter"))
    key = segmenter.cfg["spans_key"] or "attn_segments"
    handle = _open_input(input)
    with handle:
        if input.endswith(".txt"):
            texts: Iterable[str] = [handle.read()]
        else:
            texts = _read_jsonl(handle)
        docs = nlp.pipe(texts, batch_size=batch_size)
        for number, doc in enumerate(_progress(docs, quiet=quiet)):
            group = doc.spans.get(key)
            spans = list(group) if group is not None else []
            scores = group.attrs.get("scores", []) if group is not None else []
            sizes = segmenter.token_sizes(doc)
            for i, (span, score) in enumerate(zip(spans, scores, strict=True)):
                end_char = spans[i + 1].start_char if i + 1 < len(spans) else len(doc.text)
                record = {
                    "doc": number,
                    "chunk": i,
                    "text": doc.text[span.start_char : end_char],
                    "start": span.start_char,
                    "end": end_char,
                    "n_tokens": int(sizes[span.start : span.end].sum()),
                    "n_sents": sum(1 for t in span if t.is_sent_start) or 1,
                    "score": score,
                }
                typer.echo(json.dumps(record, ensure_ascii=False))


@app.command("pairs")
def pairs_cli(
    input: str = typer.Argument(..., help="A UTF-8 text file, or - for standard input."),
    layer: int = typer.Option(-1, "--layer", "-l", help="Layer (negative: from the end)."),
    head: Optional[int] = typer.Option(None, "--head", help="Head; all heads if omitted."),
    threshold: float = typer.Option(0.3, "--threshold", help="Normalised similarity cut."),
    model: str = typer.Option("default", "--model", "-m", help=MODEL_HELP),
    format: str = typer.Option("text", "--format", "-f", help="text (tables) or jsonl."),
) -> None:
    """High-similarity token pairs of a head (the paper's Fig. 9 table) and the anchor
    token of every head analysed.

    With --format jsonl, one JSON object per pair ({"layer", "head", "i", "j",
    "token_i", "token_j", "score"}) and one per head anchor ({"anchor": ...}).
    """
    from .loading import load_pipeline

    if format not in ("text", "jsonl"):
        raise typer.BadParameter("--format must be 'text' or 'jsonl'")
    handle = _open_input(input)
    nlp = load_pipeline(model)
    if "attn_head_pairs" not in nlp.pipe_names:
        heads = [] if head is None else [head]
        # (the Fig. 5 segments are not printed: spans_key "" skips them)
        nlp.add_pipe(
            "attn_head_pairs",
            config={"layers": [layer], "heads": heads, "threshold": threshold, "spans_key": ""},
        )
    with handle:
        doc = nlp(handle.read())
    pairs = doc._.head_pairs
    anchors = doc._.head_anchors
    if format == "jsonl":
        for record in pairs.to_records(doc):
            typer.echo(json.dumps(record, ensure_ascii=False))
        for anchor in anchors:
            typer.echo(json.dumps({"anchor": anchor.to_dict()}, ensure_ascii=False))
        return
    for layer_i, head_i in pairs.heads():
        rows = pairs.to_table(doc, layer_i, head_i)
        typer.echo(f"Layer {layer_i} head {head_i}: {len(rows)} pairs (layers/heads from 0)")
        typer.echo("Token_i\tToken_j\tIndex_i\tIndex_j")
        for row in rows:
            typer.echo(f"{row['Token_i']}\t{row['Token_j']}\t{row['Index_i']}\t{row['Index_j']}")
        typer.echo("")
    typer.echo("layer\thead\tanchor\tcount\tshare of pairs")
    for anchor in anchors:
        typer.echo(
            f"{anchor.layer}\t{anchor.head}\t{anchor.text}\t{anchor.count}\t{anchor.share:.3f}"
        )


@app.command("calibrate")
def calibrate_cli(
    data: Path = typer.Argument(..., help="A .conllu file or a .spacy file with gold sentences."),
    output_dir: Path = typer.Argument(
        ..., help="Where to write calibration.{json,md}, head_f1.png."
    ),
    model: str = typer.Option("attention", "--model", "-m", help=MODEL_HELP),
    save_pipeline: Optional[Path] = typer.Option(
        None, "--save", help="Also save the calibrated pipeline to this directory."
    ),
    max_heads: int = typer.Option(4, "--max-heads", help="Most heads summed in one layer."),
    candidates: Optional[str] = typer.Option(
        None,
        "--candidates",
        help='Override the candidates: any, punct, or a JSON list such as \'[".", "?"]\'.',
    ),
) -> None:
    """Choose attn_segmenter's layer, heads and threshold by boundary F1 on gold data,
    and report every head's F1 (table and heatmap)."""
    from .calibration import calibrate_segmenter
    from .components.segmenter import AttnSegmenter
    from .loading import load_pipeline

    overrides: Dict[str, Any] = {}
    if candidates is not None:
        overrides["components.attn_segmenter.candidates"] = (
            json.loads(candidates) if candidates.lstrip().startswith("[") else candidates
        )
    nlp = load_pipeline(model, overrides=overrides)
    examples = _read_examples(nlp, data)
    segmenter = cast(AttnSegmenter, nlp.get_pipe("attn_segmenter"))
    result = calibrate_segmenter(segmenter, examples, max_heads=max_heads)
    result.write(output_dir)
    typer.echo(result.markdown())
    if save_pipeline is not None:
        segmenter.update_settings({**result.best_config(), "preset": ""})
        nlp.to_disk(save_pipeline)
        typer.echo(f"Saved the calibrated pipeline to {save_pipeline}")


def _read_examples(nlp: object, data: Path) -> List:
    from spacy.tokens import DocBin
    from spacy.training import Example

    from .gold import read_conllu_documents, to_spacy_examples

    if data.suffix == ".conllu":
        return to_spacy_examples(nlp, read_conllu_documents(data))  # type: ignore[arg-type]
    if data.suffix == ".spacy":
        docs = DocBin().from_disk(data).get_docs(nlp.vocab)  # type: ignore[attr-defined]
        return [Example(nlp.make_doc(doc.text), doc) for doc in docs]  # type: ignore[attr-defined]
    raise typer.BadParameter("data must be a .conllu or .spacy file")


def main() -> None:
    """Run the command line; a coded error (spacy-attnseg's or spaCy's ``[E...]``) is
    printed without a traceback and exits with status 1."""
    try:
        app()
    except (ValueError, OSError, RuntimeError, KeyError, MemoryError) as error:
        message = str(error).strip("'\"")
        if not message.startswith("[E"):
            raise
        typer.echo(f"Error: {message}", err=True)
        raise SystemExit(1) from None
