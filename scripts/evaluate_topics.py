"""Topic segments of the default pipeline, as a user runs it, against peers on nine sets
(synthetic pieces, WikiText pieces, WikiText-2 sections without paragraph breaks, with
blank lines between paragraphs, with one paragraph per line and as Markdown pages; short
texts: whole EWT documents, documents of one to three pieces without and with paragraph
breaks) and,
on the report half, four that no setting is chosen on (the WikiText pieces as a speech
transcript writes them; pieces of Python's documentation, its sections without and with
paragraph breaks); protocol: ``paper.topic_eval``. Writes OUT.json, OUT.md and OUT.png
(every set's Pk with its interval, system by system).

    python scripts/evaluate_topics.py --half report --out metrics/segments

With ``--plot-only``, only OUT.png is drawn again, from OUT.json.

With ``--against-model NAME``, another pipeline with its own settings (e.g. ``mpnet``) is
scored beside the first on the same documents, with the paired difference.

With ``--sweep KEY=V1,V2,...``, one more pipeline for each value of that setting is
scored beside the first, each from its own pass. ``spacy project run tune-pieces`` so
chooses ``piece_tokens`` on the tuning half's WikiText pieces written as a speech
transcript, a set that ``--half tune`` scores only when ``--sets`` names it (the command
is in ``project.yml``).

With ``--replay KEY=V1,V2,...``, one more row for each value of a keyword of
``topics.segment`` (e.g. ``pieces_ratio=1.25,1.5``), recomputed from the recorded calls
of the same pass, as ``--penalties`` rows are: a sweep of the partition's own settings
for one pass's cost.

With ``--choi DIR``, only Choi's sets instead (``paper.topic_eval.choi_docs``; DIR holds
their ``*/3-11/*.ref`` files, as ``spacy project assets . --extra`` fetches them): the
3-11 set, or those named by ``--choi-lengths`` (e.g. ``3-11,3-5,6-8,9-11``), sentences
joined by spaces (no paragraph breaks); nothing is chosen on them. With ``--manifesto
DIR``, the Manifesto set (``paper.topic_eval.manifesto_docs``; DIR holds its ``*.txt``
files), the same way. With ``--wikipedia``, full-length Wikipedia articles of ``--half``
(``paper.wikipedia``, in the repo), their sections the reference, without and with
paragraph breaks, and ``--n-synthetic`` documents of ten 3-11-sentence pieces of different
articles (``spacy project run evaluate-wikipedia``: the report half). With
``--treebank-pieces FILE...``, ``--n-synthetic`` documents of ten 3-11-sentence pieces of
different documents of those CoNLL-U files, gold sentences joined by spaces
(``paper.synthetic.treebank_pieces``; ``spacy project run evaluate-gum``: UD English
GUM's dev and test, and ``evaluate-gentle``: GENTLE's only file, both fetched by ``spacy
project assets . --extra``).
"""

from __future__ import annotations

import argparse
import functools
import inspect
import math
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from paper import synthetic, wikipedia  # noqa: E402
from paper.topic_eval import (  # noqa: E402
    SPOKEN,
    UnknownSets,
    choi_docs,
    evaluate,
    manifesto_docs,
    plot,
    spoken,
)
from spacy_attnseg import topics  # noqa: E402


def choi_sets(root: Path, lengths: str, spoken_lengths: str = "") -> Dict[str, Callable[[], Any]]:
    """One loader per named length of Choi's sets, and per length of ``spoken_lengths``
    one of the same set written as a speech transcript (``spoken``); a length with no
    ``*.ref`` file under ``root`` stops the run before any model is loaded."""
    present = {path.parent.name for path in root.rglob("*.ref")}
    sets: Dict[str, Callable[[], Any]] = {}
    for form, suffix, names in ((str.strip, "", lengths), (spoken, SPOKEN, spoken_lengths)):
        for length in (part.strip() for part in names.split(",") if part.strip()):
            if length not in present:
                raise SystemExit(f"no Choi documents of {length}-sentence pieces under {root}")
            sets[f"Choi {length}{suffix}"] = functools.partial(choi_docs, root, length, form=form)
    return sets


def treebank_name(paths: List[Path]) -> str:
    """The set's name from its CoNLL-U files' names: ``en_gum-ud-dev.conllu`` and
    ``en_gum-ud-test.conllu`` make "GUM pieces", ``notes.conllu`` "NOTES pieces"."""
    names = [path.stem.split("-ud-")[0].rpartition("_")[2].upper() for path in paths]
    return f"{' + '.join(dict.fromkeys(names))} pieces"


def held_out_sets(args: argparse.Namespace) -> Optional[Dict[str, Callable[[], Any]]]:
    """The sets that ``--choi``, ``--manifesto``, ``--wikipedia`` and
    ``--treebank-pieces`` name, or None (the halves' sets) when none is given; a folder
    without Manifesto documents or a missing CoNLL-U file stops the run before any model
    is loaded."""
    if args.choi is None and args.manifesto is None and not (args.wikipedia or args.treebank):
        return None
    sets: Dict[str, Callable[[], Any]] = {}
    if args.choi is not None:
        sets.update(choi_sets(args.choi, args.choi_lengths, args.choi_spoken))
    if args.manifesto is not None:
        if not any(args.manifesto.glob("*.txt")):
            raise SystemExit(f"no Manifesto documents (*.txt) under {args.manifesto}")
        sets["Manifesto"] = lambda: manifesto_docs(args.manifesto)
    if args.wikipedia:
        for suffix, separator in (("", " "), (", paragraphs", "\n\n")):
            sets[f"Wikipedia sections{suffix}"] = functools.partial(
                wikipedia.section_docs, args.half, separator
            )
        sets["Wikipedia pieces"] = functools.partial(
            wikipedia.piece_docs, args.half, args.n_synthetic
        )
    if args.treebank:
        missing = [str(path) for path in args.treebank if not path.is_file()]
        if missing:
            raise SystemExit(f"no CoNLL-U file {', '.join(missing)}")
        sets[treebank_name(args.treebank)] = functools.partial(
            synthetic.treebank_pieces, args.treebank, n_docs=args.n_synthetic
        )
    return sets


def main(argv: Any = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--half", choices=["tune", "report"], default="report")
    parser.add_argument("--out", type=Path, default=ROOT / "metrics" / "segments")
    parser.add_argument("--n-synthetic", type=int, default=40)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--choi", type=Path, default=None, help="score Choi's sets in DIR instead")
    parser.add_argument(
        "--choi-lengths",
        default="3-11",
        help="comma-separated piece lengths of Choi's sets scored with --choi (folder names: "
        "3-11, 3-5, 6-8, 9-11, ...)",
    )
    parser.add_argument(
        "--choi-spoken",
        default="",
        help="comma-separated piece lengths of Choi's sets also scored with --choi written as "
        "a speech transcript: lower case, without punctuation (e.g. 3-11)",
    )
    parser.add_argument(
        "--manifesto",
        type=Path,
        default=None,
        help="score the Manifesto set in DIR (its *.txt files) instead, with Choi's sets if "
        "--choi is given too",
    )
    parser.add_argument(
        "--wikipedia",
        action="store_true",
        help="score full-length Wikipedia articles of --half instead (their sections the "
        "reference; without and with paragraph breaks; and --n-synthetic documents of ten "
        "pieces of different articles), with Choi's and the Manifesto sets where given",
    )
    parser.add_argument(
        "--treebank-pieces",
        dest="treebank",
        type=Path,
        nargs="+",
        default=[],
        metavar="CONLLU",
        help="score --n-synthetic documents of ten 3-11-sentence pieces of different "
        "documents of these CoNLL-U files instead (gold sentences joined by spaces), with "
        "the other held-out sets given",
    )
    parser.add_argument(
        "--model", default="default", help="pipeline name, directory or config (load_pipeline)"
    )
    parser.add_argument(
        "--set",
        action="append",
        dest="override",
        default=[],
        help="attn_segmenter setting, e.g. --set segment_cutoff=0.5",
    )
    parser.add_argument(
        "--against",
        action="append",
        default=[],
        help="an attn_segmenter setting of a second pipeline scored beside the first on the "
        "same documents, with the paired difference (repeat for several settings of that "
        "one pipeline), e.g. --against segment_vectors=hidden --against paragraph_penalty=0.55",
    )
    parser.add_argument(
        "--against-model",
        action="append",
        default=[],
        help="a second pipeline (a name, a saved directory or a config, as --model) with its "
        "own settings, scored beside the first on the same documents, with the paired "
        "difference (repeat for several), e.g. --against-model mpnet",
    )
    parser.add_argument(
        "--sweep",
        default="",
        help="KEY=V1,V2,...: one more pipeline for each value of the attn_segmenter setting KEY, "
        "each scored beside the first on the same documents from its own pass, with the paired "
        "difference (for settings that change the units or vectors, which --penalties cannot "
        "sweep from one pass), e.g. --sweep piece_tokens=24,32,48,64",
    )
    parser.add_argument(
        "--penalties",
        default="",
        help="comma-separated penalties scored beside the setting, from the same pass, each "
        "for every boundary (segment_penalty between sentences and paragraph_penalty between "
        "paragraphs; e.g. 0.45,0.5,0.6): a tuning sweep",
    )
    parser.add_argument(
        "--drifts",
        default="",
        help="comma-separated segment_drift values, each scored with each of --penalties "
        "(e.g. 0,0.02,0.03)",
    )
    parser.add_argument(
        "--replay",
        default="",
        help="KEY=V1,V2,...: one more row for each value of the keyword KEY of topics.segment "
        "(numbers, or null), recomputed from the same pass as --penalties are, e.g. --replay "
        "pieces_ratio=1.25,1.5,null",
    )
    parser.add_argument(
        "--sets",
        default="",
        help="names of the sets to score, separated by ';' (the names hold commas), e.g. "
        "'wikitext, paragraphs;wikitext, Markdown headings' (default: every set of the half)",
    )
    parser.add_argument(
        "--plot-only",
        action="store_true",
        help="only draw OUT.png again from OUT.json (no evaluation)",
    )
    args = parser.parse_args(argv)
    key, _, values = args.sweep.partition("=")
    if args.sweep and not (key.strip() and values.strip()):
        parser.error(f"--sweep takes KEY=V1,V2,... (got {args.sweep!r})")
    replay_key, _, replay_values = args.replay.partition("=")
    try:
        replayed = [
            None if v.strip() == "null" else float(v) for v in replay_values.split(",") if v.strip()
        ]
    except ValueError:
        replayed = []
    finite = all(v is None or math.isfinite(v) for v in replayed)
    if args.replay and not (replay_key.strip() and replayed and finite):
        parser.error(f"--replay takes KEY=V1,V2,... with numbers or null (got {args.replay!r})")
    keywords = inspect.signature(topics.segment).parameters
    if args.replay and (replay_key.strip() not in keywords or replay_key.strip() == "means"):
        parser.error(f"--replay: {replay_key.strip()!r} is not a keyword of topics.segment")
    if args.plot_only:
        if not args.out.with_suffix(".json").exists():
            parser.error(
                f"--plot-only draws from {args.out.with_suffix('.json')}, which is not there"
            )
        print(f"wrote {plot(args.out)}")
        return 0
    import torch

    torch.set_num_threads(args.threads)
    from spacy.cli._util import parse_config_overrides

    # (spaCy's parsing of ``--key value``: JSON where it parses, else the string)
    def settings(items: List[str]) -> Dict[str, Any]:
        return parse_config_overrides([f"--components.attn_segmenter.{item}" for item in items])

    overrides = settings(args.override)
    against = [settings(args.against)] if args.against else []
    against += [settings([f"{key.strip()}={v.strip()}"]) for v in values.split(",") if v.strip()]
    try:
        evaluate(
            args.half,
            args.out,
            model=args.model,
            overrides=overrides,
            n_synthetic=args.n_synthetic,
            peers=not args.no_peers,
            penalties=[float(p) for p in args.penalties.split(",") if p.strip()],
            drifts=[float(g) for g in args.drifts.split(",") if g.strip()],
            replays={replay_key.strip(): replayed} if args.replay else {},
            against=against,
            against_models=args.against_model,
            threads=args.threads,
            sets=held_out_sets(args),
            only=[name.strip() for name in args.sets.split(";") if name.strip()],
        )
    except UnknownSets as error:
        parser.error(str(error))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
