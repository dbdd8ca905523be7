"""Topic segments of the default pipeline, as a user runs it (plain text in, its own
sentences, one setting for every set), against peers, on nine sets and, on the report
half, four more that no setting is chosen on:

* ``synthetic``: documents of 3-11-sentence pieces of unrelated texts (``paper.synthetic``;
  WikiText-2 articles and EWT documents; tuning: first WikiText half + EWT dev; report:
  second half + EWT test), no paragraph breaks;
* ``synthetic, WikiText pieces``: the same construction from WikiText-2 articles only
  (clean punctuated prose; the closest repo set to Choi-style benchmarks);
* ``wikitext``: WikiText-2 articles, reference segments = lead and sections (the reader of
  ``paper.sections``), sentences joined by spaces (no paragraph breaks);
* ``wikitext, paragraphs``: the same articles as their paragraphs separated by blank
  lines (headings removed), as the text reaches a user;
* ``wikitext, one paragraph per line``: the same paragraphs separated by single line
  breaks (as in WikiText's own files and many text dumps);
* ``wikitext, Markdown headings``: the same articles as Markdown pages, each section
  under its ``## Heading`` (the title as ``# Title``), blank lines between paragraphs:
  how a page with headings reaches a retrieval pipeline;
* ``EWT documents`` (``EWT_DOCUMENTS``): every UD EWT document of three sentences or
  more (dev on the tuning half, test on the report half) as its author wrote it, its
  paragraphs separated by blank lines: e-mails, reviews, posts, short news stories,
  each about one thing (one reference segment);
* ``synthetic, 1-3 pieces`` (``SHORT_PIECES``): short texts, documents of one, two and
  three pieces of the synthetic set's texts (as many of each); ``, paragraphs``
  (``SHORT_PARAGRAPHS``): the same with each piece a paragraph;
* ``WikiText pieces, lowercase without punctuation`` (``SPOKEN_PIECES``), the WikiText
  pieces as a speech transcript writes them (``spoken``): on the report half, text that
  no setting is chosen on; on the tuning half scored only when named (``--sets``), the
  set that chose ``piece_tokens`` with the ``attention`` pipeline (``spacy project run
  tune-pieces``), so that the other settings and chonkie's threshold are still chosen on
  the other sets above;
* ``wikitext, hard-wrapped paragraphs`` and ``wikitext, indented paragraphs``
  (``WRAPPED_PARAGRAPHS``, ``INDENTED_PARAGRAPHS``), scored only when named
  (``--sets``), on either half: the same articles hard-wrapped without blank lines, as
  a PDF's text gives them (nothing marks a paragraph but where its last line ends) and
  as a typescript writes them (each paragraph's first line indented;
  ``wikitext_wrapped_docs``);
* ``WikiText pieces, subtitle cues`` and ``WikiText pieces, double-spaced``
  (``CUE_PIECES``, ``DOUBLE_PIECES``), scored only when named, on either half: the
  WikiText pieces as a subtitle file whose cues of nine words cut the sentences anywhere
  (``subtitle_cues``), and as a page printed double-spaced, a blank line below every
  line (``double_spaced_page``); ``WikiText pieces, under a title`` (``TITLED_PIECES``),
  the pieces below a title line and a blank line (``titled``: one long paragraph of
  many topics); ``WikiText pieces, below front matter`` (``FRONT_PIECES``), the same
  paragraph below five short ones (``below_front_matter``: a page whose front matter
  kept its blank lines and whose body lost them); and ``WikiText pieces, meeting transcript``
  (``TRANSCRIPT_PIECES``), the same pieces as a speech recognizer writes a meeting,
  speakers' turns on lines of their own with listeners' backchannels between them
  (``meeting_transcript``), ``WikiText pieces, interview`` (``INTERVIEW_PIECES``),
  the same with an interviewer's short questions in place of the backchannels, and
  ``WikiText pieces, speaker headers`` (``HEADED_PIECES``), the pieces punctuated as a
  service exports a transcript, the speaker's name and the time on a line above each
  turn (``headed_transcript``), and ``WikiText pieces, chat`` (``CHAT_PIECES``), the
  same without blank lines between the turns;
* ``WikiText pieces, each a paragraph`` and ``synthetic, each piece a paragraph``
  (``PARAGRAPH_PIECES``, ``PARAGRAPH_SYNTHETIC``), scored only when named, on either
  half: the two sets of pieces with a blank line between the pieces, as a digest or a
  page of abstracts is written;
* report only, of another kind (``paper.pydocs``), text that no setting is chosen on:
  ``Python docs pieces``, documents of 3-11-sentence pieces of different pages of
  Python's documentation, and ``Python docs sections`` (``, paragraphs``: with blank
  lines between paragraphs), one document per page, its sections the reference;
* instead of all these, with ``scripts/evaluate_topics.py --choi DIR`` (``spacy project
  run evaluate-choi``): Choi's 3-11 set (``choi_docs``), which is not in the repo and on
  which nothing is chosen.

First half tuning, second half report. Pk and WindowDiff are computed in spaCy tokens per
document (k = half the mean reference segment length in tokens, rounded half up:
``spacy_attnseg.scoring.default_k``) and averaged over
documents; F1@1 counts a boundary as found when one lies within one sentence of it (each
matched once). Peers in the same run, on the pipeline's own sentences: no boundary; NLTK
TextTiling (every sentence a paragraph); with every sentence encoded on its own by the
same MiniLM (a second model pass): embedding TextTiling (window 3, cutoff mean - std/2),
the component's partition rule on those vectors, and chonkie's SemanticChunker; and the
paper's Fig. 5 rule (``attn_head_pairs`` with the layer and ``merge_threshold`` that
``scripts/evaluate_segments.py`` chose on the WikiText tuning half). docs/s is each
system's own time (the pipeline pass for ``attn_segmenter``; the second pass included
for its users). Writes OUT.json, OUT.md and OUT.png (``plot``).

Run by ``scripts/evaluate_topics.py`` (``spacy project run evaluate-segments``)::

    python scripts/evaluate_topics.py --half report --out metrics/segments
"""

from __future__ import annotations

import bisect
import functools
import json
import os
import random
import re
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

import numpy

from spacy_attnseg.gold import read_conllu_documents, read_conllu_paragraphs

from . import pydocs
from .evaluation import load_splitter
from .figures import plot_topic_segments
from .sections import split_articles
from .segmentation_metrics import boundaries_from_starts, mean_interval, pk, window_diff
from .synthetic import TopicDocument, build, half_of, join_segments
from .topic_peers import SecondPass, nltk_texttiling
from .trained import double_spaced, wrap
from .wikitext import detokenize, read_articles

ROOT = Path(__file__).resolve().parents[1]

DATA = ROOT / "data"
CHONKIE_THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def wikitext_half(half: str) -> List[Any]:
    return half_of(read_articles(DATA / "wikitext-2" / "wiki.test.raw"), half)


def wikitext_docs(half: str) -> List[TopicDocument]:
    """Articles as sentences (the shared splitter) joined by single spaces."""
    docs = []
    for article in split_articles(wikitext_half(half), load_splitter("punkt")):
        text, starts, offset, previous = [], [], 0, None
        for sentence, segment in zip(article.sentences, article.segment_ids, strict=True):
            if segment != previous:
                starts.append(offset)
                previous = segment
            text.append(sentence)
            offset += len(sentence) + 1
        docs.append(TopicDocument(" ".join(text), starts))
    return docs


def wikitext_paragraph_docs(half: str, separator: str = "\n\n") -> List[TopicDocument]:
    """Articles as paragraphs separated by ``separator`` (a blank line, or a line break:
    one paragraph per line)."""
    return [
        join_segments(article.sections, separator)
        for article in wikitext_half(half)
        if sum(len(p) for p in article.sections) >= 2
    ]


def wikitext_markdown_docs(half: str) -> List[TopicDocument]:
    """Articles as Markdown pages: ``# Title``, the lead's paragraphs, then each
    section's ``## Heading`` and paragraphs, blank lines between; a reference segment
    starts at each heading."""
    return [
        join_segments(
            [
                [("# " if k == 0 else "## ") + heading, *paragraphs]
                for k, (heading, paragraphs) in enumerate(
                    zip(article.headings, article.sections, strict=True)
                )
            ],
            "\n\n",
        )
        for article in wikitext_half(half)
        if sum(len(p) for p in article.sections) >= 2
    ]


# the sets of articles hard-wrapped without blank lines: paragraphs marked by nothing,
# as a PDF's text gives them, or by indenting their first lines, as a typescript does
WRAPPED_PARAGRAPHS = "wikitext, hard-wrapped paragraphs"
INDENTED_PARAGRAPHS = "wikitext, indented paragraphs"


def wikitext_wrapped_docs(half: str, indent: str = "", width: int = 72) -> List[TopicDocument]:
    """Articles hard-wrapped without blank lines: each paragraph wrapped at ``width``
    characters (``textwrap.fill``, between words only), its first line indented by
    ``indent``; a reference segment starts at each section's first word."""
    docs = []
    for article in wikitext_half(half):
        if sum(len(p) for p in article.sections) < 2:
            continue
        parts: List[str] = []
        starts: List[int] = []
        offset = 0
        for paragraphs in article.sections:
            starts.append(offset + len(indent))
            for paragraph in paragraphs:
                wrapped = textwrap.fill(
                    paragraph.strip(),
                    width,
                    initial_indent=indent,
                    break_long_words=False,
                    break_on_hyphens=False,
                )
                parts.append(wrapped)
                offset += len(parts[-1]) + 1
        docs.append(TopicDocument("\n".join(parts), starts))
    return docs


def article_sentences(half: str) -> List[List[str]]:
    return [a.sentences for a in split_articles(wikitext_half(half), load_splitter("punkt"))]


def wikipieces_docs(
    half: str,
    n_docs: int,
    form: Optional[Callable[[str], str]] = None,
    separator: str = " ",
) -> List[TopicDocument]:
    """Pieces of WikiText-2 articles only (clean, punctuated prose, one register), or
    with every sentence as ``form`` writes it (``spoken``: as a speech transcript; a
    sentence it leaves blank is left out); the pieces joined by ``separator`` (a blank
    line: each piece a paragraph)."""
    texts = article_sentences(half)
    if form is not None:
        texts = [[t for t in map(form, sentences) if t] for sentences in texts]
    return build(texts, n_docs=n_docs, seed=5 if half == "tune" else 6, separator=separator)


# WikiText's joins inside a number or word (" @-@ ", " @,@ ", " @.@ ", and a clitic
# written apart: "Tatwine 's", "didn 't"), and what a word's ends may hold that is not a
# letter or digit
WIKITEXT_JOIN = re.compile(r" @(.)@ | ('\w)")
WORD_EDGES = re.compile(r"^\W+|\W+$")


def spoken(sentence: str) -> str:
    """``sentence`` as a speech transcript writes it: lower case, without punctuation
    (every word's leading and trailing marks dropped; a hyphen, apostrophe or point
    inside a word stays)."""
    words = (WORD_EDGES.sub("", w) for w in WIKITEXT_JOIN.sub(r"\1\2", sentence).lower().split())
    return " ".join(w for w in words if w)


# the name of a set written as ``spoken`` writes it, after the set's own name
SPOKEN = ", lowercase without punctuation"
# the WikiText pieces as a speech transcript writes them (the module's docstring says
# what each half does with them)
SPOKEN_PIECES = f"WikiText pieces{SPOKEN}"


# the WikiText pieces laid out as a subtitle file (SRT: a numbered cue with its timing
# line every CUE_WORDS words, its lines wrapped at CUE_WIDTH, which cuts sentences
# anywhere) and as the text of a page printed double-spaced (wrapped at 72, a blank line
# below every line)
CUE_PIECES = "WikiText pieces, subtitle cues"
DOUBLE_PIECES = "WikiText pieces, double-spaced"
CUE_WORDS = 9
CUE_WIDTH = 42
CUE_SECONDS = 3


def cue_time(seconds: int) -> str:
    """A subtitle's time stamp, ``HH:MM:SS,mmm``."""
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d},000"


def subtitle_cues(doc: TopicDocument) -> TopicDocument:
    """``doc`` (its words apart by white space) as a subtitle file (``CUE_WORDS``,
    ``CUE_WIDTH``): the cues apart by blank lines; a reference segment starts at the
    same words."""
    words = [(m.start(), m.group()) for m in re.finditer(r"\S+", doc.text)]
    moved: Dict[int, int] = {}
    parts: List[str] = []
    offset = 0
    for n, k in enumerate(range(0, len(words), CUE_WORDS)):
        cue = words[k : k + CUE_WORDS]
        head = f"{n + 1}\n{cue_time(n * CUE_SECONDS)} --> {cue_time((n + 1) * CUE_SECONDS)}\n"
        offset += len(head)
        for old, word in cue:
            moved[old] = offset
            offset += len(word) + 1  # (a space or, once wrapped, a line break)
        body = wrap(" ".join(word for _, word in cue), CUE_WIDTH)
        parts.append(head + body + "\n\n")
        offset += 1  # (the blank line's second line break)
    return TopicDocument("".join(parts), [moved[start] for start in doc.starts])


# the WikiText pieces as a meeting's transcript (``meeting_transcript``)
TRANSCRIPT_PIECES = "WikiText pieces, meeting transcript"
SPEAKERS = "ABCD"
LISTENER_LINES = ("yeah", "mm-hmm", "okay", "right", "uh huh")
# the same as an interview: an interviewer's short questions between the turns of the
# one who answers, in place of the backchannels (``meeting_transcript`` with
# ``QUESTION_LINES``, ``INTERVIEWEE``'s turns, ``INTERVIEWER``'s questions)
INTERVIEW_PIECES = "WikiText pieces, interview"
INTERVIEWEE, INTERVIEWER = "A", "Q"
QUESTION_LINES = (
    "and then what",
    "what do you mean",
    "why is that",
    "how so",
    "tell me more",
    "go on",
    "is that right",
    "what happened next",
)
BACKCHANNEL_SHARE = 0.3
# the same pieces as a service exports a transcript, a line of the speaker's name and
# the time above each turn (``headed_transcript``), and as a chat without blank lines
HEADED_PIECES = "WikiText pieces, speaker headers"
CHAT_PIECES = "WikiText pieces, chat"
HEADED_SPEAKERS = ("Ann Lee", "Bob Stone", "Carl Diaz")
# where a sentence of WikiText's spacing ends: after " . ", " ? " or " ! "
WIKITEXT_SENTENCE_END = re.compile(r"(?<= [.!?]) (?=\S)")


def piece_sentences(doc: TopicDocument) -> Tuple[List[str], Set[int]]:
    """The sentences of ``doc`` (WikiText pieces: its sentences end with a spaced
    ``" . "``, ``" ? "`` or ``" ! "``), with the white space after each, and which of
    them open a piece."""
    bounds = sorted({0, *doc.starts, *(m.end() for m in WIKITEXT_SENTENCE_END.finditer(doc.text))})
    sentences = [doc.text[a:b] for a, b in zip(bounds, [*bounds[1:], len(doc.text)], strict=True)]
    return sentences, {bounds.index(start) for start in doc.starts}


def piece_turns(
    doc: TopicDocument, rng: random.Random, most: int
) -> Iterator[Tuple[List[str], bool]]:
    """The sentences of ``doc`` (``piece_sentences``) in turns of one to ``most`` (each
    length ``rng``'s choice, drawn as the turn comes; a turn holds one piece's
    sentences), each with whether it opens a piece."""
    sentences, opens = piece_sentences(doc)
    k = 0
    while k < len(sentences):
        n = rng.randint(1, most)
        while any(k < j < k + n for j in opens):
            n -= 1
        yield sentences[k : k + n], k in opens
        k += n


def meeting_transcript(
    doc: TopicDocument,
    seed: int,
    listener_lines: Sequence[str] = LISTENER_LINES,
    speakers: str = SPEAKERS,
    listener: str = "",
) -> TopicDocument:
    """``doc`` (WikiText pieces: its sentences end with a spaced ``" . "``, ``" ? "`` or
    ``" ! "``) as a speech recognizer writes a meeting: each one or two sentences a
    speaker's turn on a line of its own (``"A: ..."``, the ``speakers`` in turn), lower
    case without punctuation (``spoken``), and after ``BACKCHANNEL_SHARE`` of the turns
    inside a piece a listener's line (``"B: mm-hmm"``, ``listener_lines``; its label
    ``listener``'s, or else the next speaker's); a reference segment starts at the turn
    that opens each piece (a seeded choice of the turns' lengths and of the listeners'
    lines)."""
    rng = random.Random(seed)
    lines: List[str] = []
    starts: List[int] = []
    offset, who = 0, 0
    for said, opens in piece_turns(doc, rng, 2):
        if opens:
            starts.append(offset)
        elif lines and rng.random() < BACKCHANNEL_SHARE:
            label = listener or speakers[who % len(speakers)]
            lines.append(f"{label}: {rng.choice(listener_lines)}")
            offset, who = offset + len(lines[-1]) + 1, who + 1
        words = spoken(" ".join(said)) or "uh"  # (marks alone: a filler)
        lines.append(f"{speakers[who % len(speakers)]}: {words}")
        offset, who = offset + len(lines[-1]) + 1, who + 1
    return TopicDocument("\n".join(lines) + "\n", starts)


def headed_transcript(doc: TopicDocument, seed: int, gap: str = "\n\n") -> TopicDocument:
    """``doc`` (WikiText pieces) as a service exports a meeting's transcript: each one to
    three sentences a speaker's turn, punctuated (``wikitext.detokenize``), below a line
    of the speaker's name and the time (``"Ann Lee  0:31"``, ``HEADED_SPEAKERS`` in
    turn), the turns apart by ``gap`` (a blank line; a line break, as a chat's
    messages); a reference segment starts at the header of the turn that opens each
    piece (a seeded choice of the turns' lengths and times)."""
    rng = random.Random(seed)
    turns: List[str] = []
    starts: List[int] = []
    offset, seconds = 0, 0
    for said, opens in piece_turns(doc, rng, 3):
        if opens:
            starts.append(offset)
        seconds += rng.randint(5, 40)
        name = HEADED_SPEAKERS[len(turns) % len(HEADED_SPEAKERS)]
        text = detokenize(" ".join(said), readable=True)
        turns.append(f"{name}  {seconds // 60}:{seconds % 60:02d}\n{text}{gap}")
        offset += len(turns[-1])
    return TopicDocument("".join(turns), starts)


# the WikiText pieces below a title and a blank line: one long paragraph of many topics
TITLED_PIECES = "WikiText pieces, under a title"
PIECES_TITLE = "Notes on several things"


def titled(doc: TopicDocument, title: str = PIECES_TITLE) -> TopicDocument:
    """``doc`` below a line of ``title`` and a blank line; the first reference segment
    starts at the title, the others at the same words."""
    head = f"{title}\n\n"
    return TopicDocument(head + doc.text, [0, *(s + len(head) for s in doc.starts if s > 0)])


FRONT_PIECES = "WikiText pieces, below front matter"
#: A newsletter's front matter: five short paragraphs of two sentences each.
FRONT_MATTER = (
    "Welcome to this week's digest of stories from around the world. It is our tenth issue.",
    "Our editors picked the pieces below from many sources. Some are long and some are short.",
    "Each story is printed as it first appeared. We changed nothing but the spelling.",
    "We hope you enjoy reading them as much as we did. Tell your friends about us.",
    "Letters to the editor are always welcome. Write to the address on the back page.",
)


def below_front_matter(doc: TopicDocument, front: Sequence[str] = FRONT_MATTER) -> TopicDocument:
    """``doc`` as one paragraph below the paragraphs ``front``, each followed by a blank
    line (a page whose front matter kept its blank lines and whose body lost them); the
    front matter is a reference segment of its own, and the others start at the same
    words."""
    head = "".join(f"{paragraph}\n\n" for paragraph in front)
    return TopicDocument(head + doc.text, [0, *(s + len(head) for s in doc.starts)])


def double_spaced_page(doc: TopicDocument, width: int = 72) -> TopicDocument:
    """``doc`` hard-wrapped at ``width`` with a blank line below every line
    (``trained.double_spaced``); a reference segment starts at the same words."""
    return TopicDocument(*double_spaced(doc.text, doc.starts, width))


def synthetic_docs(half: str, n_docs: int, separator: str = " ") -> List[TopicDocument]:
    """The synthetic set's documents, the pieces joined by ``separator`` (a blank line:
    each piece a paragraph)."""
    return build(
        synthetic_texts(half), n_docs=n_docs, seed=0 if half == "tune" else 1, separator=separator
    )


# the two sets of pieces with each piece a paragraph (a digest, a page of abstracts)
PARAGRAPH_PIECES = "WikiText pieces, each a paragraph"
PARAGRAPH_SYNTHETIC = "synthetic, each piece a paragraph"


# the sets of short texts: whole EWT documents, each one text about one thing, and
# documents of one to three pieces of the synthetic set's texts
EWT_DOCUMENTS = "EWT documents"
SHORT_PIECES = "synthetic, 1-3 pieces"
SHORT_PARAGRAPHS = "synthetic, 1-3 pieces, paragraphs"


def ewt_part(half: str) -> Path:
    """The EWT file of ``half``: dev for "tune", test for "report"."""
    part = "dev" if half == "tune" else "test"
    return DATA / "UD_English-EWT" / f"en_ewt-ud-{part}.conllu"


def ewt_documents(half: str) -> List[TopicDocument]:
    """Every EWT document of ``half`` with three sentences or more, as its author wrote
    it (an e-mail, a review, a post, a news story): its paragraphs separated by blank
    lines, the sentences of each joined by spaces; one reference segment."""
    docs = []
    for paragraphs in read_conllu_paragraphs(ewt_part(half)):
        if sum(map(len, paragraphs)) >= 3:
            docs.append(TopicDocument("\n\n".join(" ".join(p) for p in paragraphs), [0]))
    return docs


def synthetic_texts(half: str) -> List[List[str]]:
    """The synthetic set's texts: the WikiText-2 articles of ``half`` and the EWT
    documents of its part, each as its sentences."""
    texts = article_sentences(half)
    for gold in read_conllu_documents(ewt_part(half)):
        texts.append(gold.sentences())
    return texts


def short_docs(half: str, n_docs: int, separator: str = " ") -> List[TopicDocument]:
    """``n_docs`` documents of each of one, two and three pieces of the synthetic set's
    texts (``build``), in that order: short texts, a third of them about one thing; the
    pieces joined by ``separator`` (a blank line: each piece a paragraph)."""
    texts = synthetic_texts(half)
    seed = 20 if half == "tune" else 30
    return [
        doc
        for n_pieces in (1, 2, 3)
        for doc in build(
            texts, n_docs=n_docs, n_pieces=n_pieces, seed=seed + n_pieces, separator=separator
        )
    ]


CHOI_SEPARATOR = "=========="


def separated_docs(
    paths: Sequence[Path], separator: str = " ", form: Callable[[str], str] = str.strip
) -> List[TopicDocument]:
    """One document per file of ``paths``, in the format of Choi's (2000) sets: a line
    ``==========`` ends a piece; every other line is a sentence, as ``form`` writes it
    (``spoken``: as a speech transcript), unless that leaves it blank; the sentences are
    joined by ``separator``."""
    docs = []
    for path in paths:
        segments: List[List[str]] = [[]]
        for line in path.read_text(encoding="utf8", errors="replace").splitlines():
            if line.startswith(CHOI_SEPARATOR):
                segments.append([])
            elif sentence := form(line).strip():
                segments[-1].append(sentence)
        docs.append(join_segments([piece for piece in segments if piece], separator))
    return docs


def choi_docs(
    root: Path,
    lengths: str = "3-11",
    separator: str = " ",
    form: Callable[[str], str] = str.strip,
) -> List[TopicDocument]:
    """The documents of Choi's (2000) set of ``lengths``-sentence pieces: every ``*.ref``
    file in a folder named ``lengths`` under ``root`` (the layout of the copy in
    ``github.com/koomri/text-segmentation``, ``data/choi``), read in sorted order
    (``separated_docs``)."""
    paths = [path for path in sorted(root.rglob("*.ref")) if path.parent.name == lengths]
    return separated_docs(paths, separator, form)


def manifesto_docs(root: Path, separator: str = " ") -> List[TopicDocument]:
    """The six documents of the Manifesto set (Glavaš et al., 2016: American party
    manifestos, one sentence per line, cut into pieces by the topic the Comparative
    Manifestos Project gives each sentence; ``data/manifesto`` of
    ``github.com/koomri/text-segmentation``): every ``*.txt`` file in ``root``, in sorted
    order (``separated_docs``)."""
    return separated_docs(sorted(root.glob("*.txt")), separator)


def token_starts(doc: Any, char_starts: Sequence[int]) -> List[int]:
    """The tokens of ``doc`` where segments starting at ``char_starts`` start: the token
    at or after each offset; one with only whitespace before it is the document's start
    (0), so a text that opens with an indented line has no segment of that indent alone
    (which ``default_k`` would count, and no system finds)."""
    idx = [t.idx for t in doc]
    lead = len(doc.text) - len(doc.text.lstrip())
    return sorted(
        {0 if c <= lead else min(bisect.bisect_left(idx, c), len(doc) - 1) for c in char_starts}
    )


def f1_within_one(ref: Sequence[int], hyp: Sequence[int], sent_starts: Sequence[int]) -> tuple:
    """Boundary matches within one sentence: (matched, n_ref, n_hyp), 0 excluded."""
    sentence = lambda t: bisect.bisect_right(sent_starts, t) - 1  # noqa: E731
    r = sorted({sentence(t) for t in ref} - {0})
    h = sorted({sentence(t) for t in hyp} - {0})
    used: set = set()
    matched = 0
    for b in r:
        for c in sorted(h, key=lambda x: abs(x - b)):
            if abs(c - b) <= 1 and c not in used:
                used.add(c)
                matched += 1
                break
    return matched, len(r), len(h)


def score(doc: Any, ref: Sequence[int], hyp: Sequence[int]) -> Dict[str, float]:
    """Pk and WindowDiff of the segments starting at tokens ``hyp`` against ``ref`` over
    ``doc``'s tokens, ``k`` half the mean reference segment length (``default_k``, as
    ``attn_segmenter``'s scorer)."""
    n = len(doc)
    ref_gaps = boundaries_from_starts(ref, n)
    hyp_gaps = boundaries_from_starts(hyp, n)
    return {"pk": pk(ref_gaps, hyp_gaps), "wd": window_diff(ref_gaps, hyp_gaps)}


def fig5_pipeline() -> Any:
    """The default pipeline plus ``attn_head_pairs`` with the Fig. 5 choice of
    ``metrics/fig5_segments.json`` (layer 4 and 0.4 where that file is missing)."""
    from spacy_attnseg import load_pipeline

    choice = {"layer": 4, "merge_threshold": 0.4}
    path = ROOT / "metrics" / "fig5_segments.json"
    if path.exists():
        choice = json.loads(path.read_text(encoding="utf8")).get("attn_head_pairs_choice", choice)
    nlp = load_pipeline(overrides={"components.attn_segmenter.spans_key": ""})
    nlp.add_pipe(
        "attn_head_pairs",
        config={"layers": [int(choice["layer"])], "merge_threshold": choice["merge_threshold"]},
    )
    return nlp


def bar(label: str, step: str, total: int) -> Dict[str, Any]:
    """tqdm's settings for one step over a set's documents, on stderr."""
    return {
        "desc": f"{label}: {step}" if label else step,
        "total": total,
        "unit": "doc",
        "file": sys.stderr,
    }


def run(
    nlp: Any,
    fig5: Any,
    docs: Sequence[TopicDocument],
    peers: bool,
    tune: bool,
    penalties: Sequence[float] = (),
    drifts: Sequence[float] = (),
    variants: Optional[Dict[str, Any]] = None,
    label: str = "",
    replays: Optional[Dict[str, Sequence[Any]]] = None,
) -> Dict[str, Any]:
    """Score ``attn_segmenter`` and the peers on ``docs`` (``label``: the set's name, on
    the progress bars); each of ``variants`` (row name: another pipeline, e.g. the same
    with other settings) adds a row of its own pass's segments, compared with
    ``attn_segmenter``'s on the same documents. Each of ``penalties`` (with
    each of ``drifts``, where given) adds a row: the component's segments with that
    penalty for every boundary (as ``segment_penalty`` and ``paragraph_penalty``: a set
    whose documents have paragraph breaks tunes the second) and that ``segment_drift``,
    recomputed from the sentence vectors of the same pass (the component's
    ``topics.segment`` call is recorded), so a sweep costs one pass. So does each value
    of ``replays`` (a keyword of ``topics.segment``: its values, e.g. ``{"pieces_ratio":
    [1.25, 1.5]}``): a row of the recorded calls with that keyword changed."""
    from tqdm import tqdm

    from spacy_attnseg import topics

    second = SecondPass(nlp)
    systems: Dict[str, Callable[[Any], List[int]]] = {}
    if peers:
        sentences = lambda doc: [s.text for s in doc.sents]  # noqa: E731
        systems["NLTK TextTiling"] = lambda doc: nltk_texttiling(sentences(doc)) or [0]
        systems["embedding TextTiling (second pass)"] = lambda doc: second.texttiling(
            sentences(doc)
        )
        systems["partition (second pass)"] = lambda doc: second.partition(sentences(doc))
        for t in CHONKIE_THRESHOLDS if tune else (CHONKIE,):
            systems[f"chonkie SemanticChunker (second pass, threshold {t})"] = functools.partial(
                lambda doc, t: second.chonkie(sentences(doc), t), t=t
            )
    swept: Dict[str, Dict[str, Any]] = {
        f"attn_segmenter (penalty {p}" + ("" if g is None else f", drift {g}") + ")": {
            "penalty": p,
            "paragraph_penalty": p,
            **({} if g is None else {"drift": g}),
        }
        for p in penalties
        for g in ([*drifts] if drifts else [None])
    }
    for key, values in (replays or {}).items():
        for value in values:
            name = f"attn_segmenter ({key} {value})"
            if name in swept:  # (--replay penalty=0.5 beside --penalties 0.5)
                raise ValueError(f"two rows named {name!r}: replay {key} or sweep it, not both")
            swept[name] = {key: value}
    variants = variants or {}
    names = ["attn_segmenter", *swept, *variants, "no boundary", *systems]
    if fig5 is not None:
        names.append("Fig. 5 rule (attn_head_pairs)")
    rows: Dict[str, List[Dict[str, float]]] = {name: [] for name in names}
    n_segments: Dict[str, List[int]] = {name: [] for name in names}
    matches: Dict[str, numpy.ndarray] = {name: numpy.zeros(3) for name in names}
    seconds: Dict[str, float] = {name: 0.0 for name in names}
    texts = [d.text for d in docs]
    second_pass_s = 0.0  # the second pass, shared by the peers that use it (cached)
    # the partition's input for each document, for the sweep: None where the component
    # returned before partitioning (a document too short to split has one segment,
    # whatever the penalty)
    calls: List[Optional[tuple]] = []
    # each document's units (first tokens), as the component found them
    units: List[Optional[numpy.ndarray]] = []
    segment = topics.segment
    component: Any = nlp.get_pipe("attn_segmenter")
    topic_segments, unit_starts = component.topic_segments, component.unit_starts

    def recorded(means: numpy.ndarray, **settings: Any) -> Any:
        calls[-1] = (means, settings)
        return segment(means, **settings)

    def per_document(doc: Any, starts: Any) -> Any:
        calls.append(None)
        units.append(None)
        return topic_segments(doc, starts)

    def recorded_units(*args: Any) -> Any:
        units[-1] = unit_starts(*args)
        return units[-1]

    topics.segment = recorded  # type: ignore[assignment]
    component.topic_segments = per_document
    component.unit_starts = recorded_units
    try:
        t0 = time.perf_counter()
        passed = nlp.pipe(texts, batch_size=4)
        parsed = list(tqdm(passed, **bar(label, "attn_segmenter", len(texts))))
        seconds["attn_segmenter"] = time.perf_counter() - t0
    finally:
        topics.segment = segment  # type: ignore[assignment]
        del component.topic_segments, component.unit_starts
    if swept and len(calls) != len(parsed):
        raise RuntimeError(f"{len(calls)} topic_segments calls for {len(parsed)} documents")
    # other pipelines' own passes over the same texts: (pipeline, spans key, batch size)
    others = {name: (other, "attn_segments", 4) for name, other in variants.items()}
    if fig5 is not None:
        others["Fig. 5 rule (attn_head_pairs)"] = (fig5, "fig5_segments", 1)
    other_docs: Dict[str, List[Any]] = {}
    for name, (other, _, batch_size) in others.items():
        t0 = time.perf_counter()
        passed = other.pipe(texts, batch_size=batch_size)
        other_docs[name] = list(tqdm(passed, **bar(label, name, len(texts))))
        seconds[name] = time.perf_counter() - t0
    pairs = list(zip(docs, parsed, strict=True))
    scoring = "peers and scores" if systems else "scores"
    for i, (gold, doc) in enumerate(tqdm(pairs, **bar(label, scoring, len(pairs)))):
        ref = token_starts(doc, gold.starts)
        sent_starts = [s.start for s in doc.sents]
        hyps = {
            "attn_segmenter": [span.start for span in doc.spans["attn_segments"]],
            "no boundary": [0],
        }
        for name, (_, key, _) in others.items():
            # the same text: its segments map by character offset (to the same token
            # where the tokenizers agree, to the token at or after it where they do not)
            spans = other_docs[name][i].spans[key]
            hyps[name] = token_starts(doc, [span.start_char for span in spans])
        for name, changed in swept.items():
            call = calls[i]
            if call is None:
                hyps[name] = hyps["attn_segmenter"]
                continue
            means, settings = call
            found = units[i]
            assert found is not None and len(means) == len(found), "another document's call"
            starts, _ = segment(means, **{**settings, **changed})
            hyps[name] = [int(found[s]) for s in starts]
        second.clear()
        if systems:
            t0 = time.perf_counter()
            second.vectors([s.text for s in doc.sents])
            second_pass_s += time.perf_counter() - t0
        for name, system in systems.items():
            t0 = time.perf_counter()
            hyps[name] = [sent_starts[s] for s in system(doc)]
            seconds[name] += time.perf_counter() - t0
        for name, hyp in hyps.items():
            rows[name].append(score(doc, ref, hyp))
            n_segments[name].append(len(set(hyp) | {0}))
            matches[name] += f1_within_one(ref, hyp, sent_starts)
    out: Dict[str, Any] = {}
    own_pk = numpy.array([v["pk"] for v in rows["attn_segmenter"]])
    for name, values in rows.items():
        matched, n_ref, n_hyp = matches[name]
        precision = matched / n_hyp if n_hyp else 0.0
        recall = matched / n_ref if n_ref else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        pks = numpy.array([v["pk"] for v in values])
        out[name] = {
            "pk": round(float(numpy.mean(pks)), 4),
            "pk_interval": [round(x, 4) for x in mean_interval(pks)],
        }
        if name != "attn_segmenter":
            # paired over the same documents: below zero, this system has the lower Pk
            out[name]["pk_minus_attn_segmenter"] = [
                round(x, 4) for x in mean_interval(pks - own_pk)
            ]
        out[name] |= {
            "wd": round(float(numpy.mean([v["wd"] for v in values])), 4),
            "f1_within_1": round(f1, 4),
            "segments_per_doc": round(float(numpy.mean(n_segments[name])), 2),
        }
        if "second pass" in name:
            seconds[name] += second_pass_s
        if seconds[name]:
            out[name]["docs_per_s"] = round(len(docs) / seconds[name], 2)
    out["reference_segments_per_doc"] = round(float(numpy.mean([len(d.starts) for d in docs])), 2)
    return out


# how the report names ``mean_interval``'s intervals
INTERVAL = "95% over documents"


def _interval(bounds: Sequence[float], signed: bool = False) -> str:
    form = "{:+.3f}" if signed else "{:.3f}"
    return f"{form.format(bounds[0])} to {form.format(bounds[1])}"


class UnknownSets(ValueError):
    """A set name that ``evaluate`` does not know."""


CHONKIE = 0.4  # chosen on the tuning half (the lowest mean Pk over its six sets; --half tune)


def evaluate(
    half: str,
    out: Path,
    *,
    model: str = "default",
    overrides: Optional[Dict[str, Any]] = None,
    n_synthetic: int = 40,
    peers: bool = True,
    penalties: Sequence[float] = (),
    drifts: Sequence[float] = (),
    replays: Optional[Dict[str, Sequence[Any]]] = None,
    against: Sequence[Dict[str, Any]] = (),
    against_models: Sequence[str] = (),
    threads: int = 1,
    sets: Optional[Dict[str, Callable[[], List[TopicDocument]]]] = None,
    only: Sequence[str] = (),
) -> Dict[str, Any]:
    """Score the pipeline ``model`` (``load_pipeline``, with ``overrides``) and, with
    ``peers``, the other systems on the sets of ``half`` ("tune" or "report"; the
    Python docs sets only on "report"), or on ``sets`` (name: a function that makes the
    documents; sets that no setting was chosen on, as the report's title says) instead;
    ``only``: the names of the sets to score (all where empty; an unknown name raises
    ``UnknownSets``, which lists them; the tuning half's ``SPOKEN_PIECES`` and either
    half's ``WRAPPED_PARAGRAPHS``, ``INDENTED_PARAGRAPHS``, ``CUE_PIECES``,
    ``DOUBLE_PIECES``, ``TITLED_PIECES``, ``FRONT_PIECES``, ``TRANSCRIPT_PIECES``,
    ``INTERVIEW_PIECES``, ``HEADED_PIECES``, ``CHAT_PIECES``, ``PARAGRAPH_PIECES`` and
    ``PARAGRAPH_SYNTHETIC`` are scored only when named). Writes
    ``OUT.json``, ``OUT.md`` and ``OUT.png`` and returns what the JSON holds.
    ``against``: config overrides (each on top of ``overrides``) of other pipelines,
    each scored beside on the same documents from its own pass (a row naming its
    settings, with the paired difference); ``against_models``: other pipelines by name,
    saved directory or config (as ``model``), each with its own settings, scored the same
    way (a row naming the model). ``penalties``, ``drifts`` and ``replays``: rows
    recomputed from the same pass (``run``). ``threads`` is recorded (the caller sets
    torch's)."""
    from spacy_attnseg import load_pipeline

    tune = half == "tune"
    own_sets = sets is not None
    scope = "sets no setting was chosen on" if own_sets else f"{half} half"
    if sets is None:
        sets = {
            "synthetic": lambda: synthetic_docs(half, n_synthetic),
            "synthetic, WikiText pieces": lambda: wikipieces_docs(half, n_synthetic),
            "wikitext": lambda: wikitext_docs(half),
            "wikitext, paragraphs": lambda: wikitext_paragraph_docs(half),
            "wikitext, one paragraph per line": lambda: wikitext_paragraph_docs(half, "\n"),
            "wikitext, Markdown headings": lambda: wikitext_markdown_docs(half),
            EWT_DOCUMENTS: lambda: ewt_documents(half),
            SHORT_PIECES: lambda: short_docs(half, n_synthetic),
            SHORT_PARAGRAPHS: lambda: short_docs(half, n_synthetic, "\n\n"),
            SPOKEN_PIECES: lambda: wikipieces_docs(half, n_synthetic, spoken),
            WRAPPED_PARAGRAPHS: lambda: wikitext_wrapped_docs(half),
            INDENTED_PARAGRAPHS: lambda: wikitext_wrapped_docs(half, "    "),
            CUE_PIECES: lambda: list(map(subtitle_cues, wikipieces_docs(half, n_synthetic))),
            DOUBLE_PIECES: lambda: [
                double_spaced_page(doc) for doc in wikipieces_docs(half, n_synthetic)
            ],
            TITLED_PIECES: lambda: list(map(titled, wikipieces_docs(half, n_synthetic))),
            FRONT_PIECES: lambda: list(map(below_front_matter, wikipieces_docs(half, n_synthetic))),
            TRANSCRIPT_PIECES: lambda: [
                meeting_transcript(doc, seed)
                for seed, doc in enumerate(wikipieces_docs(half, n_synthetic))
            ],
            INTERVIEW_PIECES: lambda: [
                meeting_transcript(doc, seed, QUESTION_LINES, INTERVIEWEE, INTERVIEWER)
                for seed, doc in enumerate(wikipieces_docs(half, n_synthetic))
            ],
            HEADED_PIECES: lambda: [
                headed_transcript(doc, seed)
                for seed, doc in enumerate(wikipieces_docs(half, n_synthetic))
            ],
            CHAT_PIECES: lambda: [
                headed_transcript(doc, seed, "\n")
                for seed, doc in enumerate(wikipieces_docs(half, n_synthetic))
            ],
            PARAGRAPH_PIECES: lambda: wikipieces_docs(half, n_synthetic, separator="\n\n"),
            PARAGRAPH_SYNTHETIC: lambda: synthetic_docs(half, n_synthetic, "\n\n"),
        }
        if not tune:
            sets.update(
                {
                    "Python docs pieces": lambda: pydocs.piece_docs(n_synthetic),
                    "Python docs sections": lambda: pydocs.section_docs(" "),
                    "Python docs sections, paragraphs": lambda: pydocs.section_docs("\n\n"),
                }
            )
    unknown = sorted(set(only) - set(sets))
    if unknown:
        raise UnknownSets(f"unknown sets {unknown}: choose from {sorted(sets)}")
    layouts = {
        WRAPPED_PARAGRAPHS,
        INDENTED_PARAGRAPHS,
        CUE_PIECES,
        DOUBLE_PIECES,
        TITLED_PIECES,
        FRONT_PIECES,
        PARAGRAPH_PIECES,
        PARAGRAPH_SYNTHETIC,
    }
    transcripts = {TRANSCRIPT_PIECES, INTERVIEW_PIECES, HEADED_PIECES, CHAT_PIECES}
    only_when_named = set() if own_sets else layouts | transcripts
    if tune and not own_sets:
        only_when_named.add(SPOKEN_PIECES)
    chosen = {
        name: make
        for name, make in sets.items()
        if name in only or (not only and name not in only_when_named)
    }
    nlp = load_pipeline(model, overrides=overrides or {})
    fig5 = fig5_pipeline() if peers else None
    variants = {}
    for changed in against:
        label = ", ".join(f"{key.rsplit('.', 1)[-1]}={value}" for key, value in changed.items())
        variants[f"attn_segmenter ({label})"] = load_pipeline(
            model, overrides={**(overrides or {}), **changed}
        )
    for other in against_models:
        variants[f"attn_segmenter (model={other})"] = load_pipeline(other)
    results = {
        name: run(nlp, fig5, make(), peers, tune, penalties, drifts, variants, name, replays)
        for name, make in chosen.items()
    }
    segmenter: Any = nlp.get_pipe("attn_segmenter")
    payload = {
        "half": None if own_sets else half,
        "settings": dict(segmenter.cfg),
        "results": results,
        "threads": threads,
        "load_average": os.getloadavg(),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(payload, indent=2), encoding="utf8")
    title = f"# Topic segments ({scope}; Pk and WindowDiff in tokens, lower is better)"
    lines = [
        title,
        "",
        f"Pk, {INTERVAL}: a percentile bootstrap of the mean over the set's documents; "
        "Pk minus attn_segmenter's: the same of the per-document difference (below zero: "
        "a lower Pk than attn_segmenter's on the same documents).",
        "",
    ]
    for name, table in results.items():
        reference = table["reference_segments_per_doc"]
        lines += [
            f"## {name} (reference: {reference} segments/doc)",
            "",
            f"| system | Pk | Pk, {INTERVAL} | Pk minus attn_segmenter's, {INTERVAL} "
            "| WindowDiff | F1@1 | segments/doc | docs/s |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for system, row in table.items():
            if isinstance(row, dict):
                difference = row.get("pk_minus_attn_segmenter")
                lines.append(
                    f"| {system} | {row['pk']:.3f} | {_interval(row['pk_interval'])} | "
                    f"{'' if difference is None else _interval(difference, signed=True)} | "
                    f"{row['wd']:.3f} | {row['f1_within_1']:.3f} | "
                    f"{row['segments_per_doc']} | {row.get('docs_per_s', '')} |"
                )
        lines.append("")
    out.with_suffix(".md").write_text("\n".join(lines), encoding="utf8")
    plot_topic_segments(results, out.with_suffix(".png"))
    print("\n".join(lines))
    return payload


def plot(out: Path) -> Path:
    """Draw ``OUT.png`` from ``OUT.json`` (written by ``evaluate``): every set's Pk with
    its interval, system by system (``paper.figures.plot_topic_segments``)."""
    payload = json.loads(out.with_suffix(".json").read_text(encoding="utf8"))
    return plot_topic_segments(payload["results"], out.with_suffix(".png"))
