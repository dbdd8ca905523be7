"""Speed and memory of the transformer with and without the attnseg components: the
benchmark protocols behind ``scripts/benchmark.py`` (which holds the options and their
defaults).

Every configuration runs in its own process (so peak RSS is its own), over the same
documents (UD EWT test documents, repeated to reach --n-docs), with torch pinned to
--threads. `speed`: configurations are run in alternating rounds and the fastest round of
each is kept, so a burst of load on the machine does not favour one of them; then all of
them in one process, batch by batch in turn, --rounds times over, whose fastest time per
batch, summed, gives the ratios to quote (a drift in the machine's speed falls on every
configuration alike). `memory`:
peak RSS at growing numbers of documents, the documents cycled in whole batches, median of
--repeats processes per configuration and size (see `memory`'s docstring). `long`: peak
RSS of one document of 1,000, 10,000 and 100,000 tokens per configuration, beside a plain
spacy-transformers pipeline. `dense`: peak RSS and time of `chunk` over 200,000
characters of prose and of text dense in wordpieces, parts sized by wordpieces and by
characters alone. `scale`: docs/s in one process and on a local Dask cluster of
1 and 2 workers. The machine's load average is recorded before and after.

    python scripts/benchmark.py speed metrics/benchmark_speed
    python scripts/benchmark.py memory metrics/benchmark_memory
    python scripts/benchmark.py long metrics/benchmark_long
    python scripts/benchmark.py dense metrics/benchmark_dense
    python scripts/benchmark.py scale metrics/benchmark_scale

Each measured configuration runs in a child process, ``python -m paper.benchmark
one|interleaved|one-long|one-dense|one-scale ...`` (``worker``), which prints one JSON line.
"""

import argparse
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
EWT_TEST = ROOT / "data" / "UD_English-EWT" / "en_ewt-ud-test.conllu"

MODES: Dict[str, Dict[str, Any]] = {
    "transformer": {"help": "transformer alone (default sdpa attention)"},
    "pass": {
        "help": "transformer alone, its windows run as an attnseg component runs them "
        "(chunks of similar length), nothing captured"
    },
    "default": {
        "help": "the default pipeline: shipped attn_senter sentences + attn_segmenter "
        "topic segments"
    },
    "senter": {"help": "transformer + shipped attn_senter (sentences only)"},
    "segmenter": {"help": "transformer + attn_segmenter (calibrated): sentences and segments"},
    "sentences": {"help": "transformer + attn_segmenter without topic segments (spans_key '')"},
    "attentions": {
        "help": "transformer with output_attentions on every layer (eager) + attn_segmenter"
    },
    "pairs_head": {"help": "transformer + attn_head_pairs on 1 head of the last layer"},
    "pairs_layer": {"help": "transformer + attn_head_pairs on all heads of the last layer"},
    "pairs_all": {"help": "transformer + attn_head_pairs on all heads of all layers"},
    "everything": {"help": "the default pipeline + attn_head_pairs (all heads of the last layer)"},
    "pairs_all_trim": {
        "help": "transformer + attn_head_pairs on all heads of all layers + malloc_trim"
    },
}
# A mode "<mode>_trim" is <mode> with the malloc_trim component added last.
TRIM_SUFFIX = "_trim"
SPEED_MODES = [mode for mode in MODES if not mode.endswith(TRIM_SUFFIX)]
# the modes whose sentences come from a trained attn_senter (--senter picks which)
SENTER_MODES = ("default", "senter")
BATCH_SIZE = 16


def build(mode: str, pipeline: str = "attention", senter: str = "") -> Any:
    """The pipeline of ``mode``. ``pipeline`` (a shipped pipeline's name or a config)
    gives the transformer and the calibrated attn_segmenter ("attention": the embedded
    MiniLM; "mpnet": the 12-layer encoder); ``senter`` (a pipeline with a trained
    attn_senter: a name such as "mpnet-senter" or a directory) replaces the default
    pipeline of the "default" and "senter" modes."""
    from spacy_attnseg import load_pipeline

    trim = mode.endswith(TRIM_SUFFIX)
    mode = mode.removesuffix(TRIM_SUFFIX)
    if senter and mode not in SENTER_MODES:
        raise ValueError(f"--senter is for the 'default' and 'senter' modes, not {mode!r}")
    overrides: Dict[str, Any] = {}
    if mode == "sentences":
        overrides["components.attn_segmenter.spans_key"] = ""
    if mode == "attentions":
        overrides["components.transformer.model.transformer_config"] = {
            "output_attentions": True,
            "attn_implementation": "eager",
        }
    if mode in ("transformer", "pass"):
        # a plain spacy-transformers pipeline: no attnseg component was ever added
        nlp = load_pipeline(pipeline, overrides={"nlp.pipeline": ["transformer"]})
        if mode == "pass":
            from spacy_attnseg.capture import AttentionCapture, CaptureRequest

            trf_model = nlp.get_pipe("transformer").model  # type: ignore[attr-defined]
            AttentionCapture.attach(trf_model).request("benchmark", CaptureRequest())
    elif mode in ("default", "senter", "everything"):
        nlp = load_pipeline(senter or "default")
        if mode == "senter" and "attn_segmenter" in nlp.pipe_names:
            nlp.remove_pipe("attn_segmenter")
    else:
        nlp = load_pipeline(pipeline, overrides=overrides)
    if mode.startswith("pairs"):
        nlp.remove_pipe("attn_segmenter")
    if mode == "pairs_head":
        nlp.add_pipe("attn_head_pairs", config={"layers": [-1], "heads": [0]})
    elif mode == "pairs_layer":
        nlp.add_pipe("attn_head_pairs", config={"layers": [-1], "heads": []})
    elif mode == "everything":
        nlp.add_pipe("attn_head_pairs")
    elif mode == "pairs_all":
        nlp.add_pipe("attn_head_pairs", config={"layers": [], "heads": []})
    for name in nlp.pipe_names:
        component = nlp.get_pipe(name)
        if hasattr(component, "install_capture"):
            component.install_capture()
    if trim:
        nlp.add_pipe("malloc_trim", last=True)
    return nlp


def cycle(align: int = 0) -> List[str]:
    """The UD EWT test documents (316). With ``align`` (a batch size), padded with the
    first documents to a multiple of it (316 + 4 = 320 for 16), so that when the cycle
    is repeated every batch of a long run is one that a shorter run also processes."""
    from spacy_attnseg.gold import read_conllu_documents

    docs = [doc.text for doc in read_conllu_documents(EWT_TEST)]
    if align:
        docs = docs + docs[: (-len(docs)) % align]
    return docs


def texts(n_docs: int, align: int = 0) -> List[str]:
    """``n_docs`` documents: :func:`cycle` repeated."""
    docs = cycle(align)
    return [docs[i % len(docs)] for i in range(n_docs)]


def run_one(
    mode: str,
    n_docs: int,
    threads: int,
    batch_size: int = BATCH_SIZE,
    align: bool = False,
    pipeline: str = "attention",
    senter: str = "",
) -> None:
    """Run one configuration and print a JSON line (called in a subprocess)."""
    import torch

    torch.set_num_threads(threads)
    nlp = build(mode, pipeline, senter)
    data = texts(n_docs, align=batch_size if align else 0)
    for _ in nlp.pipe(data[:16], batch_size=batch_size):
        pass
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    n_tokens = 0
    for doc in nlp.pipe(data, batch_size=batch_size):
        n_tokens += len(doc)
    seconds = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "mode": mode,
                "n_docs": n_docs,
                "aligned_batches": align,
                "n_tokens": n_tokens,
                "seconds": seconds,
                "docs_per_s": n_docs / seconds,
                "peak_rss_mb": rss / 1024,
                "peak_rss_before_mb": rss_before / 1024,
            }
        )
    )


def run_interleaved(
    modes: List[str],
    n_docs: int,
    threads: int,
    rounds: int = 3,
    batch_size: int = BATCH_SIZE,
    pipeline: str = "attention",
    senter: str = "",
) -> None:
    """Every configuration in one process, batch by batch (:func:`interleaved_seconds`).
    Prints a JSON line."""
    import torch

    torch.set_num_threads(threads)
    pipelines = {
        mode: build(mode, pipeline, senter if mode in SENTER_MODES else "") for mode in modes
    }
    totals = interleaved_seconds(pipelines, texts(n_docs), rounds, batch_size)
    print(
        json.dumps(
            {"n_docs": n_docs, "batch_size": batch_size, "rounds": rounds, "seconds": totals}
        )
    )


def interleaved_seconds(
    pipelines: Dict[str, Any],
    data: List[str],
    rounds: int,
    batch_size: int = BATCH_SIZE,
    sync: Callable[[], Any] = lambda: None,
) -> Dict[str, float]:
    """Each pipeline's seconds over ``data``: each batch of documents goes through every
    pipeline in turn (the order rotating from batch to batch), ``rounds`` times over;
    each pipeline's time is the sum over batches of its fastest round on that batch. A
    change in the machine's speed (load, clock) then falls on every configuration
    alike, and a pause that hits one batch once (a garbage collection, another process)
    is dropped, which is what a ratio of a few percent needs. ``sync`` is called before
    and after each timed batch (``torch.cuda.synchronize`` on a GPU)."""
    for nlp in pipelines.values():
        for _ in nlp.pipe(data[:batch_size], batch_size=batch_size):
            pass
    modes = list(pipelines)
    batches = [data[start : start + batch_size] for start in range(0, len(data), batch_size)]
    fastest = {mode: [float("inf")] * len(batches) for mode in modes}
    for round_ in range(rounds):
        for index, batch in enumerate(batches):
            shift = (index + round_) % len(modes)
            for mode in modes[shift:] + modes[:shift]:
                sync()
                began = time.perf_counter()
                for _ in pipelines[mode].pipe(batch, batch_size=batch_size):
                    pass
                sync()
                fastest[mode][index] = min(fastest[mode][index], time.perf_counter() - began)
    return {mode: sum(times) for mode, times in fastest.items()}


# a child process: this module run with the repository on the path
WORKER = [sys.executable, "-m", "paper.benchmark"]


def _env(threads: int) -> Dict[str, str]:
    """The environment of a child process: BLAS and OpenMP pinned to ``threads``."""
    return dict(
        os.environ,
        OMP_NUM_THREADS=str(threads),
        MKL_NUM_THREADS=str(threads),
        OPENBLAS_NUM_THREADS="1",
    )


def _spawn(
    mode: str,
    n_docs: int,
    threads: int,
    extra_env: Dict[str, str] | None = None,
    align: bool = False,
    long: bool = False,
    pipeline: str = "attention",
    senter: str = "",
) -> Dict[str, Any]:
    env = {**_env(threads), **(extra_env or {})}
    command = [*WORKER, "one-long" if long else "one", mode, str(n_docs), str(threads)]
    if align:
        command.append("--align")
    if pipeline != "attention":
        command += ["--pipeline", pipeline]
    if senter:
        command += ["--senter", senter]
    return _child(command, env)


def _child(command: List[str], env: Dict[str, str]) -> Dict[str, Any]:
    """Run ``command`` (a ``worker`` call) from the repository root and return the JSON
    line it printed last."""
    path = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    out = subprocess.run(
        command,
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**env, "PYTHONPATH": path},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _machine(threads: int) -> Dict[str, Any]:
    return {
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "torch_threads": threads,
        "loadavg_before": os.getloadavg(),
    }


def _write(results: Dict[str, Any], output: Path, table: List[str]) -> None:
    output.parent.mkdir(parents=True, exist_ok=True)
    output.with_suffix(".json").write_text(json.dumps(results, indent=2), encoding="utf8")
    output.with_suffix(".md").write_text("\n".join(table) + "\n", encoding="utf8")
    print("\n".join(table))


def long_text(n_tokens: int) -> str:
    """One document of about ``n_tokens`` spaCy tokens: the UD EWT test documents joined
    by blank lines and repeated."""
    docs = cycle()
    joined: List[str] = []
    words = 0
    while words < n_tokens:
        doc = docs[len(joined) % len(docs)]
        joined.append(doc)
        # EWT averages about 1.2 spaCy tokens per whitespace-separated word
        words += int(len(doc.split()) * 1.2)
    return "\n\n".join(joined)


def run_one_long(mode: str, n_tokens: int, threads: int) -> None:
    """Run one configuration on one long document and print a JSON line (subprocess)."""
    import torch

    torch.set_num_threads(threads)
    nlp = build(mode)
    text = long_text(n_tokens)
    nlp("Warm up. This is a short document.")
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    doc = nlp(text)
    seconds = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "mode": mode,
                "n_tokens": len(doc),
                "seconds": seconds,
                "peak_rss_mb": rss / 1024,
                "peak_rss_before_mb": rss_before / 1024,
            }
        )
    )


LONG_MODES = "transformer,senter,segmenter,pairs_layer,default,everything"


def long(output: Path, modes: str, sizes: str, threads: int) -> None:
    """Peak RSS and time of one document of each length through each configuration, each
    in its own process, beside the transformer alone (a plain spacy-transformers
    pipeline) on the same document: the components' memory must grow at most linearly
    with the document and stay close to the transformer's."""
    machine = _machine(threads)
    chosen = [m.strip() for m in modes.split(",") if m.strip()]
    lengths = [int(s) for s in sizes.split(",")]
    results: Dict[str, Dict[int, Dict[str, Any]]] = {mode: {} for mode in chosen}
    for n in lengths:
        for mode in chosen:
            result = _spawn(mode, n, threads, long=True)
            results[mode][n] = result
            print(
                f"{mode} {result['n_tokens']} tokens: {result['peak_rss_mb']:.0f} MB, "
                f"{result['seconds']:.1f} s",
                flush=True,
            )
    machine["loadavg_after"] = os.getloadavg()
    base = results.get("transformer", {})
    header = " | ".join(f"{n:,} tokens: MB (x transformer)" for n in lengths)
    table = [
        f"Peak RSS of one document (UD EWT test documents joined by blank lines) per "
        f"configuration, each run in its own process, torch threads {threads}, load "
        f"average before {machine['loadavg_before'][0]:.2f}, after "
        f"{machine['loadavg_after'][0]:.2f}. The transformer alone is a plain "
        "spacy-transformers pipeline (no attnseg component, so its windows run in one "
        "batch, padded to the longest); with a component the windows run sorted by "
        "length in chunks, each padded to its own longest (capture.plan_chunks).",
        "",
        f"| configuration | {header} | seconds at {lengths[-1]:,} |",
        "|---|" + "---|" * (len(lengths) + 1),
    ]
    for mode in chosen:
        cells = []
        for n in lengths:
            r = results[mode][n]
            ratio = r["peak_rss_mb"] / base[n]["peak_rss_mb"] if n in base else float("nan")
            r["rss_ratio_to_transformer"] = ratio
            cells.append(f"{r['peak_rss_mb']:.0f} ({ratio:.2f})")
        table.append(
            f"| {MODES[mode]['help']} | {' | '.join(cells)} | "
            f"{results[mode][lengths[-1]]['seconds']:.0f} |"
        )
    _write({"machine": machine, "results": results}, output, table)


# The text layouts of the `layout` benchmark, each written from WikiText-2 test articles,
# and what separates its paragraphs (and the articles of a document)
SEPARATORS = {
    "joined by spaces": " ",
    "blank lines": "\n\n",
    "one paragraph per line": "\n",
    "hard-wrapped": "\n\n",
    "hard-wrapped without blank lines": "\n",
    "indented paragraphs": "\n",
    "Markdown": "\n\n",
    "transcript": "\n",
}
LAYOUTS = tuple(SEPARATORS)
# layouts whose lines are utterances: each line's first token starts a sentence, as a
# speech recognizer's segments would give them (the text has no punctuation to say so)
LINE_STARTS = ("transcript",)
WIKITEXT_TEST = ROOT / "data" / "wikitext-2" / "wiki.test.raw"
# a fenced code block, after every CODE_EVERY-th paragraph of a Markdown page
CODE_BLOCK = "```python\nfor line in open(path):\n    print(line.strip())\n```"
CODE_EVERY = 5
# every LIST_EVERY-th paragraph of a Markdown page is a list of its sentences
LIST_EVERY = 3


def layout_article(layout: str, article: Any) -> str:
    """One article's paragraphs (a ``paper.wikitext.Article``: its sections, the lead
    first under the title, each under its heading) written in ``layout`` (one of
    ``LAYOUTS``): joined by spaces, separated by blank lines or by line breaks,
    hard-wrapped at 72 between blank lines or without them (as a PDF's text gives
    paragraphs), hard-wrapped with each first line indented by four spaces and no blank
    lines, or as a Markdown page
    (``# title``, ``## heading``s, every ``LIST_EVERY``-th paragraph a bulleted list of
    its sentences whose wrapped lines are indented, a fenced code block after every
    ``CODE_EVERY``-th), or as a ``transcript``: the whole article on one line, lower case
    without punctuation (``topic_eval.spoken``), so that each of its sentences is a line
    of thousands of characters."""
    if layout not in SEPARATORS:
        raise ValueError(f"unknown layout {layout!r}: choose from {LAYOUTS}")
    separator = SEPARATORS[layout]
    paragraphs = [p for section in article.sections for p in section]
    if layout == "transcript":
        from .topic_eval import spoken

        return " ".join(spoken(p) for p in paragraphs)
    if layout in ("hard-wrapped", "hard-wrapped without blank lines"):
        paragraphs = [textwrap.fill(p, 72) for p in paragraphs]
    elif layout == "indented paragraphs":
        paragraphs = [textwrap.fill(p, 72, initial_indent="    ") for p in paragraphs]
    if layout != "Markdown":
        return separator.join(paragraphs)
    blocks, k = [f"# {article.headings[0]}"], 0
    for heading, section in zip(article.headings, article.sections, strict=True):
        if blocks[1:]:
            blocks.append(f"## {heading}")
        for paragraph in section:
            k += 1
            if k % LIST_EVERY == 0:
                items = re.split(r"(?<=[.!?])\s+(?=[A-Z])", paragraph)
                blocks.append(
                    "\n".join(
                        "* " + textwrap.fill(item, 70, subsequent_indent="  ") for item in items
                    )
                )
            else:
                blocks.append(textwrap.fill(paragraph, 80))
            if k % CODE_EVERY == 0:
                blocks.append(CODE_BLOCK)
    return separator.join(blocks)


def layout_text(layout: str, n_tokens: int) -> str:
    """One document of about ``n_tokens`` spaCy tokens: WikiText-2 test articles (each
    once, readable), each written in ``layout`` (``layout_article``), in turn, separated
    as the layout separates paragraphs (``SEPARATORS``)."""
    from .wikitext import read_articles

    parts: List[str] = []
    words = 0
    # WikiText averages about 1.2 spaCy tokens per whitespace-separated word; a
    # transcript, without punctuation, about one
    per_word = 1.0 if layout == "transcript" else 1.2
    for article in read_articles(WIKITEXT_TEST, readable=True):
        if words >= n_tokens:
            break
        parts.append(layout_article(layout, article))
        words += int(len(parts[-1].split()) * per_word)
    if words < n_tokens:
        raise ValueError(f"WikiText-2 test holds about {words:,} tokens, not {n_tokens:,}")
    return SEPARATORS[layout].join(parts)


# what ``layout_seconds`` times, each a key of its result
LAYOUT_STEPS = ("sentences_s", "units_s", "records_s")


def layout_seconds(nlp: Any, text: str, line_starts: bool = False) -> Dict[str, Any]:
    """Seconds of the rules that read a Doc's layout, on ``text`` (no model runs):
    the sentences (``sentences.unmarked_starts``, as ``attn_senter`` decides them, from
    start probabilities of 0.9 after sentence-final punctuation, and with
    ``line_starts`` at every line's first token, and 0.02 elsewhere), the
    topic segments' units (paragraphs, headings, repeated sentences: what
    ``attn_segmenter`` reads before it partitions) and the records ``chunks`` writes
    (``records.chunk_records``) with a segment a sentence, the most there can be."""
    import numpy

    from spacy_attnseg import records, sentences, topics

    doc = nlp.make_doc(text)
    final = sentences.sentence_final(doc)
    probs = numpy.full(len(doc), 0.02)
    probs[0] = 0.9  # (a Doc's first token starts its first sentence)
    probs[1:][final[:-1]] = 0.9
    if line_starts:
        probs[[t.i for t in doc if sentences.starts_line(doc, t.i)]] = 0.9
    start = time.perf_counter()
    starts = sentences.unmarked_starts(doc, probs, 0.5, 0.75, paragraph_breaks=True)
    middle = time.perf_counter()
    firsts = numpy.flatnonzero(starts)
    paragraph_first = sentences.paragraph_starts(doc, firsts)
    texts = sentences.sentence_texts(doc, firsts)
    headings = sentences.heading_sentences(doc, firsts, paragraph_first, texts)
    sentences.heads_prose(headings, paragraph_first, texts)
    topics.repeat_groups(texts)
    end = time.perf_counter()
    ends = [*firsts[1:], len(doc)]
    doc.spans["segments"] = [doc[a:b] for a, b in zip(firsts, ends, strict=True)]
    doc.spans["segments"].attrs["scores"] = [0.0] * len(firsts)
    written = time.perf_counter()
    records.chunk_records(doc, 0, "segments")
    return {
        "n_tokens": len(doc),
        "n_sentences": len(firsts),
        "n_paragraphs": int(paragraph_first.sum()),
        "sentences_s": middle - start,
        "units_s": end - middle,
        "records_s": time.perf_counter() - written,
    }


def layout(output: Path, layouts: str, sizes: str, repeats: int) -> None:
    """Seconds of the layout rules (``layout_seconds``) on one document of each length
    in each layout (``layout_text``), the fastest of ``repeats`` runs: the rules must
    grow linearly with the document, whatever its layout (a rule that reads the text
    once per line would not)."""
    import spacy_attnseg

    machine = _machine(1)
    nlp = spacy_attnseg.load_pipeline()
    chosen = [name.strip() for name in layouts.split(",") if name.strip()]
    lengths = [int(s) for s in sizes.split(",")]
    results: Dict[str, Dict[int, Dict[str, Any]]] = {name: {} for name in chosen}
    growth: Dict[str, float] = {}
    for name in chosen:
        for n in lengths:
            text = layout_text(name, n)
            runs = [layout_seconds(nlp, text, name in LINE_STARTS) for _ in range(repeats)]
            best = min(runs, key=lambda r: sum(r[step] for step in LAYOUT_STEPS))
            results[name][n] = best
            print(
                f"{name}, {best['n_tokens']} tokens: sentences {best['sentences_s']:.2f} s, "
                f"units {best['units_s']:.2f} s, records {best['records_s']:.2f} s",
                flush=True,
            )
    machine["loadavg_after"] = os.getloadavg()
    header = " | ".join(f"{n:,} tokens: s (ms per 1,000 tokens)" for n in lengths)
    table = [
        f"Seconds of the rules that read the layout (no model runs: sentences as "
        f"attn_senter decides them from given start probabilities, then the topic "
        f"segments' paragraphs, headings and repeated sentences, and the records "
        f"`chunks` writes with a segment a sentence) on one document of "
        f"WikiText-2 test articles per layout, the fastest of {repeats} runs, load average "
        f"before {machine['loadavg_before'][0]:.2f}, after "
        f"{machine['loadavg_after'][0]:.2f}. Growth: the time's ratio between the last two "
        f"lengths over their tokens' ratio (1: linear).",
        "",
        f"| layout | {header} | growth |",
        "|---|" + "---:|" * (len(lengths) + 1),
    ]
    for name in chosen:
        cells = []
        for n in lengths:
            r = results[name][n]
            seconds = sum(r[step] for step in LAYOUT_STEPS)
            r["ms_per_1000_tokens"] = 1e6 * seconds / r["n_tokens"]
            cells.append(f"{seconds:.2f} ({r['ms_per_1000_tokens']:.1f})")
        growth[name] = float("nan")
        if len(lengths) > 1:
            before, last = (results[name][n] for n in lengths[-2:])
            growth[name] = last["ms_per_1000_tokens"] / before["ms_per_1000_tokens"]
        table.append(f"| {name} | {' | '.join(cells)} | {growth[name]:.2f} |")
    _write({"machine": machine, "results": results, "growth": growth}, output, table)


# The texts of the `dense` benchmark, each cut to --characters: English prose and three
# kinds of text of one or two characters per wordpiece
DENSE_KINDS = ("prose", "url", "cjk", "numbers")


def dense_text(kind: str, n_chars: int) -> str:
    """``n_chars`` characters of one kind of text: ``prose`` (UD EWT test documents joined
    by blank lines), ``url`` (one URL of ``"a/"`` repeated), ``cjk`` (Chinese without
    spaces) or ``numbers`` (integers joined by spaces)."""
    if kind == "prose":
        text = long_text(n_chars // 3)
    elif kind == "url":
        text = "see https://e.com/" + "a/" * n_chars
    elif kind == "cjk":
        text = "\u4e2d\u6587\u5b57\u7b26" * (n_chars // 4 + 1)
    elif kind == "numbers":
        text = " ".join(str(i * 7919) for i in range(n_chars // 4))
    else:
        raise ValueError(f"kind {kind!r}: one of {', '.join(DENSE_KINDS)}")
    return text[:n_chars]


def run_one_dense(kind: str, n_chars: int, threads: int, per_wordpiece: int) -> None:
    """``spacy_attnseg.chunks`` (``max_tokens`` 128) over one text of ``kind`` with
    ``records.CHARACTERS_PER_WORDPIECE`` set to ``per_wordpiece`` (0: parts by characters
    alone); prints a JSON line (subprocess). Asserts that the chunks join to the text and that
    each holds at most ``max_tokens`` wordpieces."""
    import torch

    from spacy_attnseg import load_pipeline, records

    torch.set_num_threads(threads)
    records.CHARACTERS_PER_WORDPIECE = per_wordpiece
    max_tokens = 128
    nlp = load_pipeline(overrides={"components.attn_segmenter.max_tokens": max_tokens})
    sizer = records.chunk_sizer(nlp)
    assert sizer is not None
    text = dense_text(kind, n_chars)
    parts = records.chunk_parts(text, nlp.max_length, sizer)
    nlp("Warm up. This is a short document.")
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    chunks = list(records.chunks(nlp, [text]))
    seconds = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert "".join(chunk["text"] for chunk in chunks) == text
    assert all(chunk["n_tokens"] <= max_tokens for chunk in chunks)
    print(
        json.dumps(
            {
                "kind": kind,
                "characters": len(text),
                "wordpieces": sizer.count(text),
                "characters_per_wordpiece": per_wordpiece,
                "parts": len(parts),
                "most_part_wordpieces": max(sizer.count(text[a:b]) for a, b, _ in parts),
                "chunks": len(chunks),
                "seconds": seconds,
                "peak_rss_mb": rss / 1024,
                "peak_rss_before_mb": rss_before / 1024,
            }
        )
    )


def dense(output: Path, kinds: str, n_chars: int, threads: int) -> None:
    """Peak RSS and time of ``chunk`` over one document of each kind of text, with parts
    sized by their wordpieces (``records.CHARACTERS_PER_WORDPIECE``) and by characters
    alone, each in its own process: a part's memory grows with its wordpieces, so text
    of about one wordpiece per character must be read in shorter parts."""
    from spacy_attnseg import records

    machine = _machine(threads)
    chosen = [k.strip() for k in kinds.split(",") if k.strip()]
    settings = (records.CHARACTERS_PER_WORDPIECE, 0)
    results: Dict[str, Dict[int, Dict[str, Any]]] = {kind: {} for kind in chosen}
    for kind in chosen:
        for per in settings:
            command = [*WORKER, "one-dense", kind, str(n_chars), str(threads), str(per)]
            result = _child(command, _env(threads))
            results[kind][per] = result
            print(json.dumps(result), flush=True)
    machine["loadavg_after"] = os.getloadavg()
    table = [
        f"`chunk` (`max_tokens` 128) over one document of {n_chars:,} characters of each "
        f"kind, each run in its own process, torch threads {threads}, load average before "
        f"{machine['loadavg_before'][0]:.2f}, after {machine['loadavg_after'][0]:.2f}. "
        f"Parts sized by wordpieces: a part counts as {settings[0]} characters per "
        "wordpiece where that is more than its length (`records.text_size`), at most "
        f"{records.PART_CHARACTERS:,}; by characters: its length alone.",
        "",
        "| text | wordpieces | by wordpieces: parts (most wordpieces) | MB | seconds "
        "| by characters: parts (most wordpieces) | MB | seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for kind in chosen:
        cells = [
            f"{r['parts']} ({r['most_part_wordpieces']:,}) | {r['peak_rss_mb']:.0f} | "
            f"{r['seconds']:.0f}"
            for r in (results[kind][per] for per in settings)
        ]
        wordpieces = results[kind][settings[0]]["wordpieces"]
        table.append(f"| {kind} | {wordpieces:,} | {' | '.join(cells)} |")
    _write({"machine": machine, "results": results}, output, table)


def run_one_scale(engine: str, workers: int, n_docs: int, partition: int) -> None:
    """One engine run of the default pipeline to DocBin bytes; prints a JSON line."""
    from spacy_attnseg.scale import Job, run

    data = texts(n_docs, align=BATCH_SIZE)
    job = Job(model="default", output="docbin", batch_size=BATCH_SIZE, threads=1)
    start = time.perf_counter()
    first = None
    for _ in run(data, job, engine=engine, workers=workers, size=partition):
        if first is None:
            first = time.perf_counter()
    end = time.perf_counter()
    assert first is not None
    print(
        json.dumps(
            {
                "engine": engine or "none",
                "workers": workers if engine else 1,
                "n_docs": n_docs,
                "partition_size": partition,
                "seconds": end - start,
                "docs_per_s": n_docs / (end - start),
                "first_partition_s": first - start,
                "steady_docs_per_s": (n_docs - partition) / (end - first),
            }
        )
    )


def scale(output: Path, n_docs: int, partition: int) -> None:
    """docs/s of the default pipeline writing DocBin bytes: in one process (torch on one
    thread), and through the Dask engine on a local cluster of 1 and 2 worker processes
    (one thread each), start-up (cluster, pipeline loads) included; and the rate after
    the first partition came back (steady)."""
    machine = _machine(1)
    runs = [("", 1), ("dask", 1), ("dask", 2)]
    results = []
    for engine, workers in runs:
        command = [*WORKER, "one-scale", engine, str(workers), str(n_docs), str(partition)]
        env = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
        result = _child(command, env)
        results.append(result)
        print(json.dumps(result), flush=True)
    machine["loadavg_after"] = os.getloadavg()
    base = results[0]
    table = [
        f"The default pipeline over {n_docs} UD EWT test documents (cycled), written as "
        f"DocBin bytes, partitions of {partition} documents, torch on one thread per "
        f"process, {machine['cpu_count']} cores, load average before "
        f"{machine['loadavg_before'][0]:.2f}, after {machine['loadavg_after'][0]:.2f}. "
        "Total: from the call to the last result (cluster start-up and pipeline loading "
        "included); steady: after the first partition came back.",
        "",
        "| engine | workers | seconds | docs/s | x one process | steady docs/s |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        table.append(
            f"| {r['engine']} | {r['workers']} | {r['seconds']:.1f} | {r['docs_per_s']:.2f} | "
            f"{r['docs_per_s'] / base['docs_per_s']:.2f} | {r['steady_docs_per_s']:.2f} |"
        )
    _write({"machine": machine, "results": results}, output, table)


def speed(
    output: Path, modes: str, n_docs: int, rounds: int, threads: int, pipeline: str, senter: str
) -> None:
    """Docs/s and peak RSS of each configuration, and ratios to the transformer alone."""
    chosen = [m.strip() for m in modes.split(",") if m.strip()]
    machine = _machine(threads)
    runs: Dict[str, List[Dict[str, Any]]] = {mode: [] for mode in chosen}
    for round_ in range(rounds):
        order = chosen if round_ % 2 == 0 else list(reversed(chosen))
        for mode in order:
            senter_for = senter if mode in SENTER_MODES else ""
            result = _spawn(mode, n_docs, threads, pipeline=pipeline, senter=senter_for)
            runs[mode].append(result)
            print(f"round {round_ + 1} {mode}: {result['docs_per_s']:.2f} docs/s", flush=True)
    interleaved: Dict[str, float] = {}
    if "transformer" in chosen and len(chosen) > 1:
        command = [*WORKER, "interleaved", ",".join(chosen), str(n_docs), str(threads)]
        command += ["--rounds", str(rounds)]
        command += ["--pipeline", pipeline] + (["--senter", senter] if senter else [])
        interleaved = _child(command, _env(threads))["seconds"]
        print(f"interleaved: {interleaved}", flush=True)
    machine["loadavg_after"] = os.getloadavg()
    best = {mode: max(results, key=lambda r: r["docs_per_s"]) for mode, results in runs.items()}
    base = best.get("transformer")
    table = [
        f"Speed of pipeline {pipeline!r} on {n_docs} UD EWT test documents, "
        f"torch threads {threads}, "
        f"{machine['cpu_count']} cores, load average before {machine['loadavg_before'][0]:.2f}"
        f", after {machine['loadavg_after'][0]:.2f}. Separate processes: fastest of "
        f"{rounds} alternating rounds. Interleaved: every configuration in one process, "
        f"batch by batch ({BATCH_SIZE} documents) in turn, {rounds} times over, the fastest "
        "time of each batch summed, so that a change in the machine's speed falls on all "
        "of them alike (the ratio to quote).",
        "",
        "| configuration | docs/s | time / transformer alone | interleaved: time / "
        "transformer alone | interleaved: time / the attnseg pass alone | peak RSS (MB) |",
        "|---|---|---|---|---|---|",
    ]
    for mode in chosen:
        r = best[mode]
        ratio = base["seconds"] and r["seconds"] / base["seconds"] if base else float("nan")
        r["time_ratio_to_transformer"] = ratio
        mixed = f"{interleaved[mode] / interleaved['transformer']:.3f}" if interleaved else "–"
        to_pass = f"{interleaved[mode] / interleaved['pass']:.3f}" if "pass" in interleaved else "–"
        table.append(
            f"| {MODES[mode]['help']} | {r['docs_per_s']:.2f} | {ratio:.3f} | {mixed} | "
            f"{to_pass} | {r['peak_rss_mb']:.0f} |"
        )
    settings = {"pipeline": pipeline, "senter": senter, "n_docs": n_docs, "rounds": rounds}
    _write(
        {
            "machine": machine,
            "settings": settings,
            "best": best,
            "runs": runs,
            "interleaved_seconds": interleaved,
        },
        output,
        table,
    )


def memory(
    output: Path,
    mode: str,
    sizes: str,
    threads: int,
    repeats: int,
    baseline: str,
    trim: bool,
    mmap_threshold: int,
) -> None:
    """Peak RSS of one configuration streaming over growing numbers of documents, beside
    the same measurement of a baseline configuration (the transformer alone), of the
    configuration with the malloc_trim component, and of the configuration with a fixed
    glibc mmap threshold.

    The 316 documents are cycled with the cycle padded to a whole number of batches
    (320 for batches of 16): otherwise a longer run meets batch compositions (up to
    5,907 tokens) that a shorter one never processes, and the ratio of peaks measures
    the largest batch met rather than growth. Each configuration and size runs in
    ``repeats`` separate processes, interleaved, because the peak varies from process to
    process with the allocator's state; the table gives medians with their ranges, the
    JSON every run."""
    machine = _machine(threads)
    counts = [int(s) for s in sizes.split(",")]
    rows: List[Tuple[str, str, Dict[str, str]]] = [(MODES[mode]["help"], mode, {})]
    if baseline:
        rows.append((MODES[baseline]["help"], baseline, {}))
    if trim:
        trim_mode = mode + TRIM_SUFFIX
        label = MODES.get(trim_mode, {"help": f"{MODES[mode]['help']} + malloc_trim"})["help"]
        rows.append((label, trim_mode, {}))
    if mmap_threshold:
        env = {"MALLOC_MMAP_THRESHOLD_": str(mmap_threshold)}
        rows.append((f"{MODES[mode]['help']}, MALLOC_MMAP_THRESHOLD_={mmap_threshold}", mode, env))
    runs: List[Dict[int, List[Dict[str, Any]]]] = [{n: [] for n in counts} for _ in rows]
    for repeat in range(repeats):
        for index, (_label, name, env) in enumerate(rows):
            for n in counts:
                result = _spawn(name, n, threads, env, align=True)
                result["repeat"] = repeat
                runs[index][n].append(result)
                print(
                    f"repeat {repeat + 1} {name}{' ' + str(env) if env else ''} {n} docs: "
                    f"{result['peak_rss_mb']:.0f} MB, {result['docs_per_s']:.2f} docs/s",
                    flush=True,
                )
    machine["loadavg_after"] = os.getloadavg()
    measured: List[Dict[str, Any]] = []
    for (label, name, env), by_size in zip(rows, runs, strict=True):
        sizes_summary: List[Dict[str, Any]] = []
        for n in counts:
            peaks = [r["peak_rss_mb"] for r in by_size[n]]
            sizes_summary.append(
                {
                    "n_docs": n,
                    "median_peak_rss_mb": statistics.median(peaks),
                    "min_peak_rss_mb": min(peaks),
                    "max_peak_rss_mb": max(peaks),
                    "median_docs_per_s": statistics.median(r["docs_per_s"] for r in by_size[n]),
                    "runs": by_size[n],
                }
            )
        first = sizes_summary[0]["median_peak_rss_mb"]
        for summary in sizes_summary:
            summary["median_ratio_to_first"] = summary["median_peak_rss_mb"] / first
        measured.append({"configuration": label, "mode": name, "env": env, "sizes": sizes_summary})
    n_file, n_cycle = len(cycle()), len(cycle(BATCH_SIZE))
    header = " | ".join(f"{n} docs: peak RSS (MB)" for n in counts)
    table = [
        f"Peak RSS streaming over the UD EWT test documents in batches of {BATCH_SIZE}, "
        f"each run in its own process, median of {repeats} runs (min-max), torch threads "
        f"{threads}, load average before {machine['loadavg_before'][0]:.2f}, after "
        f"{machine['loadavg_after'][0]:.2f}. The {n_file} documents are cycled padded to "
        f"{n_cycle}, a whole number of batches, so that every batch of the longer run also "
        f"occurs in the shorter one and the ratio measures growth, not a larger batch met "
        f"later. Target: '{MODES[mode]['help']}' at {counts[-1]} documents within 10% of "
        f"{counts[0]}.",
        "",
        f"| configuration | {header} | RSS {counts[-1]} / {counts[0]} (medians) "
        f"| docs/s at {counts[-1]} |",
        "|---|" + "---|" * (len(counts) + 2),
    ]
    for entry in measured:
        summaries = entry["sizes"]
        cells = " | ".join(
            f"{s['median_peak_rss_mb']:.0f} ({s['min_peak_rss_mb']:.0f}-{s['max_peak_rss_mb']:.0f})"
            for s in summaries
        )
        table.append(
            f"| {entry['configuration']} | {cells} | {summaries[-1]['median_ratio_to_first']:.3f} "
            f"| {summaries[-1]['median_docs_per_s']:.2f} |"
        )
    _write(
        {"machine": machine, "mode": mode, "repeats": repeats, "measured": measured},
        output,
        table,
    )


def worker(argv: Any = None) -> None:
    """The child processes' entry: ``one MODE N_DOCS THREADS [--align] [--pipeline P]
    [--senter S]``, ``interleaved MODE,MODE,... N_DOCS THREADS [--rounds R]
    [--pipeline P] [--senter S]``, ``one-long MODE N_TOKENS THREADS``, ``one-dense KIND
    N_CHARS THREADS PER_WORDPIECE``, ``one-scale ENGINE WORKERS N_DOCS PARTITION``."""
    parser = argparse.ArgumentParser(prog="python -m paper.benchmark")
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("one")
    one.add_argument("mode")
    one.add_argument("n_docs", type=int)
    one.add_argument("threads", type=int)
    one.add_argument("--align", action="store_true")
    one.add_argument("--pipeline", default="attention")
    one.add_argument("--senter", default="")
    mixed = commands.add_parser("interleaved")
    mixed.add_argument("modes")
    mixed.add_argument("n_docs", type=int)
    mixed.add_argument("threads", type=int)
    mixed.add_argument("--rounds", type=int, default=3)
    mixed.add_argument("--pipeline", default="attention")
    mixed.add_argument("--senter", default="")
    one_long = commands.add_parser("one-long")
    one_long.add_argument("mode")
    one_long.add_argument("n_tokens", type=int)
    one_long.add_argument("threads", type=int)
    one_dense = commands.add_parser("one-dense")
    one_dense.add_argument("kind")
    one_dense.add_argument("n_chars", type=int)
    one_dense.add_argument("threads", type=int)
    one_dense.add_argument("per_wordpiece", type=int)
    one_scale = commands.add_parser("one-scale")
    one_scale.add_argument("engine")
    one_scale.add_argument("workers", type=int)
    one_scale.add_argument("n_docs", type=int)
    one_scale.add_argument("partition", type=int)
    args = parser.parse_args(argv)
    if args.command == "one":
        run_one(
            args.mode,
            args.n_docs,
            args.threads,
            align=args.align,
            pipeline=args.pipeline,
            senter=args.senter,
        )
    elif args.command == "interleaved":
        run_interleaved(
            args.modes.split(","),
            args.n_docs,
            args.threads,
            rounds=args.rounds,
            pipeline=args.pipeline,
            senter=args.senter,
        )
    elif args.command == "one-long":
        run_one_long(args.mode, args.n_tokens, args.threads)
    elif args.command == "one-dense":
        run_one_dense(args.kind, args.n_chars, args.threads, args.per_wordpiece)
    else:
        run_one_scale(args.engine, args.workers, args.n_docs, args.partition)


if __name__ == "__main__":
    worker()
