"""spaCy's tokenizer, in time linear in the length of runs without white space.

spaCy's tokenizer strips prefixes and suffixes off a run of characters without white
space one at a time, searching what is left each time: a run of many of them (20,000
``"!"``, ``"<>"`` or ``"'s"`` repeated, a URL repeated without spaces) takes time that
grows with the square of its length (about a minute for 20,000 ``"!"``; spaCy issue
#1768). :class:`RunTokenizer` tokenizes such a run ``MAX_RUN`` characters at a time and
joins the pieces (``Doc.from_docs``), the text unchanged and no sentence start set where
two pieces meet (the sentence components decide); any other text it tokenizes
as spaCy's tokenizer does, to the token. ``spacy-attnseg.Tokenizer.v1`` builds it with
the language's defaults, as ``spacy.Tokenizer.v1`` builds spaCy's. A text that holds a
lone surrogate, which spaCy's tokenizer stops on with a ``UnicodeEncodeError``, is E128.

:class:`ZeroWidthTokenizer` (``spacy-attnseg.Tokenizer.v2`` and ``.v3``) also
reads a zero-width space or U+FEFF as a space, where spaCy's tokenizer reads them as
letters: ``"back.\u200bNext"`` is ``"back"``, ``"."``, ``"\u200b"``, ``"Next"`` rather
than one token. Text without them it tokenizes as ``RunTokenizer`` does.

``spacy-attnseg.Tokenizer.v3`` (the shipped configs') is ``.v2`` with a footnote marker
glued to the punctuation that ends a sentence split off (``GLUED_MARKER_INFIXES``):
``"1990.[3] The"`` is ``"1990"``, ``"."``, ``"["``, ``"3"``, ``"]"``, ``"The"``, where
``.v2`` kept ``"1990.[3"`` one token, and no sentence could end at its period. It also
splits the other scripts' sentence terminals inside a run (``"话。这"``), which spaCy's
English tokenizer splits only at a run's end.
"""

from __future__ import annotations

import re
from typing import Callable, Iterator, List, Optional, Sequence, Type

from spacy.attrs import IS_SPACE, NORM, ORTH
from spacy.language import Language
from spacy.tokenizer import Tokenizer
from spacy.tokens import Doc
from spacy.util import compile_infix_regex, compile_prefix_regex, compile_suffix_regex, registry

from .errors import Errors

# Sentence-final punctuation: tokens that continue a separator run instead of starting
# the next sentence (``sentences``). Beside the ASCII ones, Unicode's sentence terminals
# of the scripts spaCy's tokenizers split off: CJK full stops and full-width marks,
# Arabic and Urdu, Devanagari, Armenian, Ethiopic, Myanmar and the small forms.
SENTENCE_FINAL = frozenset(
    [".", "!", "?", "...", "…", "‼", "‽", "⁇", "⁈", "⁉"]
    + ["。", "｡", "！", "？", "．", "﹒", "﹖", "﹗"]
    + ["؟", "۔", "।", "॥", "։", "።", "፧", "፨", "။", "᙮", "߹"]
)
# Terminals that end a sentence wherever they stand (no abbreviations or decimals use
# them): every SENTENCE_FINAL mark but the ASCII ones and the ellipses. This tokenizer
# splits them inside a run without white space (``terminal_infix``).
UNAMBIGUOUS_FINAL = SENTENCE_FINAL - {".", "!", "?", "...", "…", "．", "﹒"}

#: a lone half of a UTF-16 surrogate pair (``json.loads`` gives one for an escape such as
#: ``"\\udcff"``, ``surrogateescape`` for a byte that is not UTF-8): no encoder (spaCy's
#: string store, the model's tokenizer) accepts one
SURROGATE = re.compile("[\ud800-\udfff]")
#: what a tokenizer sets on a token (spaCy's special cases set only these), and so what
#: the pieces' Docs pass on to the joined Doc; a piece's first token is no sentence start
#: (``Doc.from_docs`` copies the pieces' sentence starts by default)
TOKEN_ATTRS = [ORTH, NORM]
#: the most characters without white space that spaCy's tokenizer reads at once
MAX_RUN = 250
#: a longer run (from its first character: a search that may start inside a run takes
#: time that grows with its length times MAX_RUN, 0.6 s for 1 MB of 250-letter words)
LONG_RUN = re.compile(rf"(?<!\S)\S{{{MAX_RUN + 1},}}")


def cuts(text: str) -> List[int]:
    """Where ``text`` is cut for the tokenizer (0 first): the start of each run of more
    than ``MAX_RUN`` characters without white space, and every ``MAX_RUN`` characters
    into it. A piece ends where the next begins, so the white space after a run stays
    with the run's last piece, as the token before it holds it in the whole text."""
    found = [0]
    for run in LONG_RUN.finditer(text):
        found.extend(range(run.start(), run.end(), MAX_RUN))
    return found if len(found) < 2 or found[1] > 0 else found[1:]


def pieces(text: str) -> Iterator[str]:
    """``text`` cut where ``cuts`` says; joined, they give it back."""
    bounds = cuts(text) + [len(text)]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        yield text[a:b]


class RunTokenizer(Tokenizer):
    """spaCy's ``Tokenizer``, with each run of more than ``MAX_RUN`` characters without
    white space tokenized ``MAX_RUN`` characters at a time (module docstring)."""

    def __call__(self, text: str) -> Doc:
        surrogate = SURROGATE.search(text)
        if surrogate is not None:  # (spaCy's tokenizer stops with a UnicodeEncodeError)
            raise ValueError(
                Errors.E128.format(where="", code=ord(surrogate.group()), pos=surrogate.start())
            )
        if len(text) <= MAX_RUN or LONG_RUN.search(text) is None:
            return super().__call__(text)
        call = super().__call__
        docs = [call(piece) for piece in pieces(text)]
        return Doc.from_docs(docs, ensure_whitespace=False, attrs=TOKEN_ATTRS)


#: characters that break words without showing (a zero-width space; U+FEFF, a byte-order
#: mark, or where files were joined, one at each file's start): spaCy's tokenizer splits
#: only at white space, so ``"back.\u200bNext"`` was one token, and no sentence could start
#: at ``"Next"``; the model's tokenizer deletes them, as it deletes white space
ZERO_WIDTH = "\u200b\ufeff"
_TO_SPACE = str.maketrans(ZERO_WIDTH, " " * len(ZERO_WIDTH))


def reads_as_space(text: str) -> bool:
    """Whether ``text`` is white space once each ``ZERO_WIDTH`` character reads as one:
    the lexical attribute ``IS_SPACE`` of the pipelines whose tokenizer is
    ``ZeroWidthTokenizer``."""
    return text.translate(_TO_SPACE).isspace()


class ZeroWidthTokenizer(RunTokenizer):
    """``RunTokenizer``, with each ``ZERO_WIDTH`` character read as a space: the tokens of
    other characters are those of the text with spaces there, and each zero-width
    character is a white-space token (``IS_SPACE``, ``reads_as_space``), or part of one
    next to it, as spaCy's tokenizer makes one of a line break."""

    def __call__(self, text: str) -> Doc:
        spaced = text.translate(_TO_SPACE)
        if spaced == text:
            return super().__call__(text)
        words: List[str] = []
        spaces: List[bool] = []
        norms: List[Optional[str]] = []
        for token in super().__call__(spaced):
            end = token.idx + len(token.text)
            word = text[token.idx : end]
            if words and not spaces[-1] and reads_as_space(words[-1]) and reads_as_space(word):
                words[-1] += word  # (a zero-width character, then spaCy's white-space token)
                norms[-1] = None
            else:
                words.append(word)
                norms.append(token.norm_ if word == token.text else None)
                spaces.append(False)
            if not token.whitespace_:
                continue
            if text[end] == " ":
                spaces[-1] = True
            elif reads_as_space(words[-1]):
                words[-1] += text[end]
                norms[-1] = None
            else:
                words.append(text[end])
                norms.append(None)
                spaces.append(False)
        doc = Doc(self.vocab, words=words, spaces=spaces)
        for token, norm in zip(doc, norms, strict=True):
            if norm is not None and norm != token.norm_:
                token.norm_ = norm
        return doc


# A footnote marker glued to the sentence-final punctuation before it, as text copied
# from Wikipedia holds them (``"built in 1990.[3] The next"``, ``"down.[4][5]"``,
# ``"wet.[a]"``, ``"true.[citation needed]"``, ``'said."[3]'``): spaCy's tokenizer kept
# ``"1990.[3"`` one token, so no sentence could end at its period. Within a run without
# white space (whose last ``"]"`` spaCy has already split off), these infixes split off
# the punctuation, the ``"["`` after it (or after it and a closing quote), and each
# ``"]"`` and ``"["`` of a ``"]["`` between numbered markers, giving the tokens
# ``sentences.REFERENCE_MARKER`` reads: ``"1990" "." "[" "3" "]"``. A marker glued to a
# word without punctuation (``"long[1]"``) stays as spaCy makes it, as code's ``"v[0]"``
# does; a chain of numbered indexes (``"v[0][1]"``) is split at its ``"]["``.
_MARKER = r"(?:\d{1,3}[a-z]?(?:[,\u2013-]\d{1,3}[a-z]?)*|[a-z])(?:\]|[,\u2013-]?$)"
_NUMBER = r"\d{1,3}[a-z]?(?:\]|$)"
_QUOTE = "[\"'\u201d\u2019]"
# (each opens with the character it splits off, and only then looks behind it: a pattern
# that opens by looking behind is tried at every character of every run)
GLUED_MARKER_INFIXES = (
    rf"[.!?]+(?={_QUOTE}?\[(?:{_MARKER}|(?:citation|note)$))",
    rf"\[(?:(?<=[.!?]\[)|(?<=[.!?]{_QUOTE}\[))(?={_MARKER}|(?:citation|note)$)",
    rf"\](?<=\d\])(?=\[{_NUMBER})",
    rf"\[(?<=\d\]\[)(?={_NUMBER})",
)


def terminal_infix() -> str:
    """An infix of a run of the other scripts' sentence terminals
    (``UNAMBIGUOUS_FINAL``: ``"。"``, ``"！"``, ``"؟"``, ``"।"``, ...), which always end
    a sentence: spaCy's English tokenizer splits one off the end of a run without white
    space but not inside it, so ``"第一句话。第二句话"`` was one token."""
    marks = "".join(sorted(mark for mark in UNAMBIGUOUS_FINAL if len(mark) == 1))
    return f"[{re.escape(marks)}]+"


def with_defaults(
    nlp: Language, cls: Type[RunTokenizer] = RunTokenizer, extra_infixes: Sequence[str] = ()
) -> RunTokenizer:
    """A ``cls`` with the language's defaults (those of ``spacy.Tokenizer.v1``), and
    ``extra_infixes`` besides the language's."""
    prefixes, suffixes = nlp.Defaults.prefixes, nlp.Defaults.suffixes
    infixes = [*(nlp.Defaults.infixes or ()), *extra_infixes]
    return cls(
        nlp.vocab,
        rules=nlp.Defaults.tokenizer_exceptions,
        prefix_search=compile_prefix_regex(prefixes).search if prefixes else None,
        suffix_search=compile_suffix_regex(suffixes).search if suffixes else None,
        infix_finditer=compile_infix_regex(infixes).finditer if infixes else None,
        token_match=nlp.Defaults.token_match,
        url_match=nlp.Defaults.url_match,
    )


def read_zero_width_as_space(nlp: Language) -> None:
    """The vocabulary's ``IS_SPACE`` reads each ``ZERO_WIDTH`` character as a space
    (``reads_as_space``), as ``ZeroWidthTokenizer``'s tokens need."""
    # (spaCy's stubs leave the getters out; a new lexeme's flags come from them)
    nlp.vocab.lex_attr_getters[IS_SPACE] = reads_as_space  # type: ignore[attr-defined]
    for character in ZERO_WIDTH:  # (a lexeme made before keeps its flags)
        nlp.vocab[character].is_space = True


@registry.tokenizers("spacy-attnseg.Tokenizer.v1")
def create_tokenizer() -> Callable[[Language], Tokenizer]:
    """A ``RunTokenizer`` with the language's defaults (those of ``spacy.Tokenizer.v1``)."""
    return with_defaults


@registry.tokenizers("spacy-attnseg.Tokenizer.v2")
def create_zero_width_tokenizer() -> Callable[[Language], Tokenizer]:
    """A ``ZeroWidthTokenizer`` with the language's defaults; the vocabulary's
    ``IS_SPACE`` reads each ``ZERO_WIDTH`` character as a space (``reads_as_space``)."""

    def tokenizer_factory(nlp: Language) -> Tokenizer:
        read_zero_width_as_space(nlp)
        return with_defaults(nlp, ZeroWidthTokenizer)

    return tokenizer_factory


@registry.tokenizers("spacy-attnseg.Tokenizer.v3")
def create_marker_tokenizer() -> Callable[[Language], Tokenizer]:
    """``spacy-attnseg.Tokenizer.v2``, with a footnote marker glued to the sentence-final
    punctuation before it split off (``GLUED_MARKER_INFIXES``: ``"1990.[3]"`` is
    ``"1990" "." "[" "3" "]"``), and the other scripts' sentence terminals inside a run
    without white space (``terminal_infix``: ``"话。这"`` is ``"话" "。" "这"``)."""

    def tokenizer_factory(nlp: Language) -> Tokenizer:
        read_zero_width_as_space(nlp)
        infixes = [*GLUED_MARKER_INFIXES, terminal_infix()]
        return with_defaults(nlp, ZeroWidthTokenizer, infixes)

    return tokenizer_factory
