"""Doc-level containers for high context-similarity token pairs (Halevi et al. 2026, Sec. 3).

:class:`HeadPairs` holds, for one Doc, the token pairs ``(i, j)`` whose normalised
context similarity in head ``head`` of layer ``layer`` reached the threshold, as
columnar numpy arrays. :func:`anchors` derives each head's "anchor" token (the most
common token among its pairs, the paper's Fig. 11a). Both classes have ``to_dict`` /
``from_dict`` and msgpack encoders/decoders registered with srsly, so they survive
``Doc.to_bytes``, ``DocBin(store_user_data=True)`` and pickling when stored in
``doc.user_data`` (which :func:`install_extensions` arranges).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Dict, List, Tuple, Union

import numpy
import srsly
from numpy.typing import ArrayLike
from spacy.tokens import Doc, Span

from .errors import Errors, invalid_array, is_whole_number

#: The one underlying Doc extension that stores the data (and is serialised).
DOC_PAIRS_ATTR = "attnseg_pairs"
#: Public read/write view on :data:`DOC_PAIRS_ATTR` (Doc) or read view (Span).
PAIRS_ATTR = "head_pairs"
#: Read-only getter computing :func:`anchors` from the pairs (Doc and Span).
ANCHORS_ATTR = "head_anchors"

_PAIRS_KEY = "__attnseg_headpairs__"
_ANCHORS_KEY = "__attnseg_headanchors__"
_COLUMNS = ("layer", "head", "i", "j", "score")

DocOrTexts = Union[Doc, Sequence[str]]


def _int_col(values: Any) -> numpy.ndarray:
    return numpy.ascontiguousarray(numpy.asarray(values, dtype=numpy.int32).reshape(-1))


def _float_col(values: Any) -> numpy.ndarray:
    return numpy.ascontiguousarray(numpy.asarray(values, dtype=numpy.float32).reshape(-1))


def _is_sorted(*columns: numpy.ndarray) -> bool:
    """Whether rows are in lexicographic order of the columns (first column first)."""
    earlier_equal = numpy.ones(len(columns[0]) - 1, dtype=bool)
    for column in columns:
        step = column[1:].astype(numpy.int64) - column[:-1]
        if (earlier_equal & (step < 0)).any():
            return False
        earlier_equal &= step == 0
    return True


class HeadPairs:
    """High-similarity token pairs of one Doc, one row per (layer, head, i, j).

    Columns are 1d numpy arrays of equal length: ``layer``, ``head``, ``i``, ``j``
    (int32; ``i`` and ``j`` are Doc token indices, normally ``i < j``) and ``score``
    (float32, the normalised context similarity that passed the threshold).
    The constructor accepts any array-likes (lists, numpy; not cupy), coerces them to
    these dtypes and sorts the rows by (layer, head, i, j); duplicate rows are not
    removed. Equality compares the arrays element-wise.
    """

    layer: numpy.ndarray
    head: numpy.ndarray
    i: numpy.ndarray
    j: numpy.ndarray
    score: numpy.ndarray

    def __init__(
        self, layer: ArrayLike, head: ArrayLike, i: ArrayLike, j: ArrayLike, score: ArrayLike
    ) -> None:
        self._assign(layer, head, i, j, score)
        if len(self.layer) > 1 and not _is_sorted(self.layer, self.head, self.i, self.j):
            self._take(numpy.lexsort((self.j, self.i, self.head, self.layer)))

    def _assign(
        self, layer: ArrayLike, head: ArrayLike, i: ArrayLike, j: ArrayLike, score: ArrayLike
    ) -> None:
        """Coerce the columns to their dtypes and check that their lengths agree."""
        self.layer = _int_col(layer)
        self.head = _int_col(head)
        self.i = _int_col(i)
        self.j = _int_col(j)
        self.score = _float_col(score)
        n = len(self.layer)
        if any(len(col) != n for col in (self.head, self.i, self.j, self.score)):
            raise invalid_array(
                "pairs.HeadPairs",
                "HeadPairs columns must have equal lengths, got "
                f"{[len(getattr(self, c)) for c in _COLUMNS]}",
            )

    @classmethod
    def from_sorted(
        cls, layer: ArrayLike, head: ArrayLike, i: ArrayLike, j: ArrayLike, score: ArrayLike
    ) -> HeadPairs:
        """Build from columns the caller guarantees to be sorted by (layer, head, i, j)
        (e.g. produced in that order): coerced and length-checked like the constructor,
        but not checked for order nor sorted."""
        self = cls.__new__(cls)
        self._assign(layer, head, i, j, score)
        return self

    def _take(self, index: numpy.ndarray) -> None:
        self.layer = self.layer[index]
        self.head = self.head[index]
        self.i = self.i[index]
        self.j = self.j[index]
        self.score = self.score[index]

    def _subset(self, keep: numpy.ndarray) -> HeadPairs:
        # Rows of a sorted HeadPairs stay sorted under boolean selection.
        return HeadPairs(
            self.layer[keep], self.head[keep], self.i[keep], self.j[keep], self.score[keep]
        )

    @classmethod
    def empty(cls) -> HeadPairs:
        """Return a HeadPairs with no rows."""
        z = numpy.zeros((0,), dtype=numpy.int32)
        return cls(z, z.copy(), z.copy(), z.copy(), numpy.zeros((0,), dtype=numpy.float32))

    @classmethod
    def concat(cls, items: Sequence[HeadPairs]) -> HeadPairs:
        """Concatenate several HeadPairs (e.g. one per layer) and re-sort the rows."""
        if not items:
            return cls.empty()
        cols = [numpy.concatenate([getattr(p, c) for p in items]) for c in _COLUMNS]
        # Items of distinct, increasing layers (one item per layer, in order) are
        # already in order once concatenated.
        ranges = [(int(p.layer[0]), int(p.layer[-1])) for p in items if len(p)]
        if all(lo == hi for lo, hi in ranges) and all(
            a[1] < b[0] for a, b in zip(ranges[:-1], ranges[1:], strict=True)
        ):
            return cls.from_sorted(*cols)
        return cls(*cols)

    def __len__(self) -> int:
        return len(self.layer)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HeadPairs):
            return NotImplemented
        return all(numpy.array_equal(getattr(self, c), getattr(other, c)) for c in _COLUMNS)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"HeadPairs(n_pairs={len(self)}, heads={len(self.heads())})"

    def select(self, layer: int | None = None, head: int | None = None) -> HeadPairs:
        """Rows of the given layer and/or head (None means any), each a whole number of
        at least 0 (E146): a layer's own number, not an index from the end."""
        _check_indices("select", Errors.E146, any_ok=True, layer=layer, head=head)
        keep = numpy.ones((len(self),), dtype=bool)
        if layer is not None:
            keep &= self.layer == layer
        if head is not None:
            keep &= self.head == head
        return self._subset(keep)

    def involving(self, token_i: int) -> HeadPairs:
        """Rows where the token with Doc index ``token_i`` is either ``i`` or ``j``; the
        index a whole number of at least 0 (E147)."""
        _check_indices("involving", Errors.E147, token_i=token_i)
        return self._subset((self.i == token_i) | (self.j == token_i))

    def within(self, start: int, end: int) -> HeadPairs:
        """Rows whose two tokens both lie in the token span ``[start, end)``.

        Token indices are kept Doc-relative (not shifted by ``start``); ``start`` and
        ``end`` are whole numbers of at least 0 (E147), as ``doc[start:end]``'s
        ``span.start`` and ``span.end`` are.
        """
        _check_indices("within", Errors.E147, start=start, end=end)
        keep = (self.i >= start) & (self.i < end) & (self.j >= start) & (self.j < end)
        return self._subset(keep)

    def heads(self) -> List[Tuple[int, int]]:
        """Sorted list of the (layer, head) combinations that have at least one row."""
        if not len(self):
            return []
        keys = numpy.unique(numpy.stack([self.layer, self.head], axis=1), axis=0)
        return [(int(lay), int(h)) for lay, h in keys]

    def to_records(self, doc: DocOrTexts) -> List[Dict[str, Any]]:
        """One dict per row with keys ``layer, head, i, j, token_i, token_j, score``.

        ``token_i`` / ``token_j`` are the token texts (``token.text`` for a Doc, the
        given strings otherwise). Plain Python types, no pandas needed.
        """
        texts = _texts(doc)
        return [
            {
                "layer": int(lay),
                "head": int(h),
                "i": int(a),
                "j": int(b),
                "token_i": texts[a],
                "token_j": texts[b],
                "score": float(s),
            }
            for lay, h, a, b, s in zip(
                self.layer.tolist(),
                self.head.tolist(),
                self.i.tolist(),
                self.j.tolist(),
                self.score.tolist(),
                strict=True,
            )
        ]

    def to_table(self, doc: DocOrTexts, layer: int, head: int) -> List[Dict[str, Any]]:
        """The paper's Fig. 9 table for one head: dicts with keys
        ``Token_i, Token_j, Index_i, Index_j``, ordered by (Index_i, Index_j)."""
        _check_indices("to_table", Errors.E146, any_ok=True, layer=layer, head=head)
        texts = _texts(doc)
        sel = self.select(layer=layer, head=head)
        return [
            {"Token_i": texts[a], "Token_j": texts[b], "Index_i": int(a), "Index_j": int(b)}
            for a, b in zip(sel.i.tolist(), sel.j.tolist(), strict=True)
        ]

    def to_dict(self) -> Dict[str, Any]:
        """The columns as a dict of numpy arrays (msgpack-able through srsly)."""
        return {c: getattr(self, c) for c in _COLUMNS}

    @classmethod
    def from_dict(cls, msg: Dict[str, Any]) -> HeadPairs:
        """Inverse of :meth:`to_dict` (also accepts lists instead of arrays)."""
        return cls(*(msg[c] for c in _COLUMNS))


@dataclass
class HeadAnchor:
    """The anchor token of one head (the paper's Fig. 11a).

    ``text`` is the anchor's lower-cased token text (``token.lower_``), ``count`` the
    number of token occurrences with that text among the head's pairs (each pair
    contributes both of its tokens, so a pair ``the``-``the`` counts twice) and
    ``share`` the fraction of the head's pairs that include the anchor at least once.
    """

    layer: int
    head: int
    text: str
    count: int
    share: float

    def to_dict(self) -> Dict[str, Any]:
        return {
            "layer": int(self.layer),
            "head": int(self.head),
            "text": self.text,
            "count": int(self.count),
            "share": float(self.share),
        }

    @classmethod
    def from_dict(cls, msg: Dict[str, Any]) -> HeadAnchor:
        return cls(
            layer=int(msg["layer"]),
            head=int(msg["head"]),
            text=str(msg["text"]),
            count=int(msg["count"]),
            share=float(msg["share"]),
        )


def _check_indices(method: str, error: str, any_ok: bool = False, **indices: Any) -> None:
    """``error`` (E146 for a layer or head, E147 for a token) unless each of ``indices``
    is an integer (Python's or NumPy's, not a bool) of at least 0, or with ``any_ok``
    None (any)."""
    for name, value in indices.items():
        if value is None and any_ok:
            continue
        if not is_whole_number(value, 0, numpy_ok=True):
            raise ValueError(error.format(method=method, name=name, value=value))


def _texts(doc: DocOrTexts) -> List[str]:
    if isinstance(doc, Doc):
        return [t.text for t in doc]
    return list(doc)


def _lower_texts(doc: DocOrTexts) -> List[str]:
    if isinstance(doc, Doc):
        return [t.lower_ for t in doc]
    return [t.lower() for t in doc]


def anchors(pairs: HeadPairs, doc_or_texts: DocOrTexts) -> List[HeadAnchor]:
    """Per (layer, head) with pairs, the token text that occurs most often in its pairs.

    Texts are compared lower-cased (``token.lower_`` for a Doc, ``str.lower()`` for a
    sequence of strings), so "The" and "the" count as one token. Each pair contributes
    both of its tokens. Ties on the count are broken by the earliest Doc position at
    which a tied text occurs among the head's pairs. Returns one :class:`HeadAnchor`
    per head, ordered by (layer, head); heads without pairs are absent.
    """
    texts = _lower_texts(doc_or_texts)
    result: List[HeadAnchor] = []
    if not len(pairs):
        return result
    n_tokens = len(texts)
    lo = int(min(pairs.i.min(), pairs.j.min()))
    hi = int(max(pairs.i.max(), pairs.j.max()))
    if lo < 0 or hi >= n_tokens:
        raise ValueError(Errors.E017.format(lo=lo, hi=hi, n_tokens=n_tokens))
    vocab: Dict[str, int] = {}
    ids = numpy.asarray([vocab.setdefault(t, len(vocab)) for t in texts], dtype=numpy.int64)
    id2text = list(vocab)
    n_texts = len(id2text)
    # Rows are sorted by (layer, head), so each head is a contiguous run of rows; all
    # heads are counted at once with one (head, text) key.
    change = (pairs.layer[1:] != pairs.layer[:-1]) | (pairs.head[1:] != pairs.head[:-1])
    starts = numpy.flatnonzero(numpy.r_[True, change])
    n_groups = len(starts)
    group = numpy.cumsum(numpy.r_[False, change], dtype=numpy.int64)
    tok_i, tok_j = ids[pairs.i], ids[pairs.j]
    key = numpy.concatenate([group * n_texts + tok_i, group * n_texts + tok_j])
    pos = numpy.concatenate([pairs.i, pairs.j]).astype(numpy.int64)
    counts = numpy.bincount(key, minlength=n_groups * n_texts).reshape(n_groups, n_texts)
    earliest_flat = numpy.full((n_groups * n_texts,), n_tokens, dtype=numpy.int64)
    numpy.minimum.at(earliest_flat, key, pos)
    earliest = earliest_flat.reshape(n_groups, n_texts)
    # Highest count first, then earliest position (distinct texts never share one).
    top = counts.max(axis=1)
    tied = numpy.where(counts == top[:, None], earliest, n_tokens + 1)
    anchor = tied.argmin(axis=1)
    wanted = anchor[group]
    hits = numpy.bincount(group, weights=(tok_i == wanted) | (tok_j == wanted), minlength=n_groups)
    sizes = numpy.bincount(group, minlength=n_groups)
    for g, s in enumerate(starts.tolist()):
        result.append(
            HeadAnchor(
                layer=int(pairs.layer[s]),
                head=int(pairs.head[s]),
                text=id2text[int(anchor[g])],
                count=int(top[g]),
                share=float(hits[g] / sizes[g]),
            )
        )
    return result


# --- srsly msgpack hooks ---------------------------------------------------------


@srsly.msgpack_encoders("attnseg_headpairs")
def serialize_head_pairs(obj: Any, chain: Any = None) -> Any:
    if isinstance(obj, HeadPairs):
        return {_PAIRS_KEY: obj.to_dict()}
    if isinstance(obj, HeadAnchor):
        return {_ANCHORS_KEY: obj.to_dict()}
    return obj if chain is None else chain(obj)


@srsly.msgpack_decoders("attnseg_headpairs")
def deserialize_head_pairs(obj: Any, chain: Any = None) -> Any:
    if isinstance(obj, dict):
        if _PAIRS_KEY in obj:
            return HeadPairs.from_dict(obj[_PAIRS_KEY])
        if _ANCHORS_KEY in obj:
            return HeadAnchor.from_dict(obj[_ANCHORS_KEY])
    return obj if chain is None else chain(obj)


# --- spaCy extensions ------------------------------------------------------------


def _coerce(value: Any) -> HeadPairs:
    if value is None:
        return HeadPairs.empty()
    if isinstance(value, HeadPairs):
        return value
    if isinstance(value, dict):
        # Deserialised before this module registered its msgpack decoder.
        return HeadPairs.from_dict(value.get(_PAIRS_KEY, value))
    raise TypeError(Errors.E018.format(kind=type(value).__name__))


def get_doc_pairs(doc: Doc) -> HeadPairs:
    """The Doc's pairs from ``doc._.attnseg_pairs`` (empty HeadPairs if unset)."""
    return _coerce(getattr(doc._, DOC_PAIRS_ATTR))


def set_doc_pairs(doc: Doc, value: HeadPairs | None) -> None:
    """Store ``value`` (or clear with None) under ``doc._.attnseg_pairs``."""
    setattr(doc._, DOC_PAIRS_ATTR, None if value is None else _coerce(value))


def get_span_pairs(span: Span) -> HeadPairs:
    """The Doc's pairs with both tokens inside ``span`` (indices stay Doc-relative)."""
    return get_doc_pairs(span.doc).within(span.start, span.end)


def get_doc_anchors(doc: Doc) -> List[HeadAnchor]:
    return anchors(get_doc_pairs(doc), doc)


def get_span_anchors(span: Span) -> List[HeadAnchor]:
    return anchors(get_span_pairs(span), span.doc)


def install_extensions() -> None:
    """Register the extensions (idempotent; existing ones are left as they are).

    - ``Doc._.attnseg_pairs`` (default None): the stored :class:`HeadPairs`; the only
      attribute that is serialised with the Doc.
    - ``Doc._.head_pairs``: getter/setter view on it, always a HeadPairs (empty if unset).
    - ``Span._.head_pairs``: getter, the Doc's pairs within the span.
    - ``Doc._.head_anchors`` / ``Span._.head_anchors``: getters, :func:`anchors` of the
      above pairs.
    """
    if not Doc.has_extension(DOC_PAIRS_ATTR):
        Doc.set_extension(DOC_PAIRS_ATTR, default=None)
    if not Doc.has_extension(PAIRS_ATTR):
        Doc.set_extension(PAIRS_ATTR, getter=get_doc_pairs, setter=set_doc_pairs)
    if not Span.has_extension(PAIRS_ATTR):
        Span.set_extension(PAIRS_ATTR, getter=get_span_pairs)
    if not Doc.has_extension(ANCHORS_ATTR):
        Doc.set_extension(ANCHORS_ATTR, getter=get_doc_anchors)
    if not Span.has_extension(ANCHORS_ATTR):
        Span.set_extension(ANCHORS_ATTR, getter=get_span_anchors)


__all__ = [
    "DOC_PAIRS_ATTR",
    "PAIRS_ATTR",
    "ANCHORS_ATTR",
    "HeadPairs",
    "HeadAnchor",
    "anchors",
    "install_extensions",
    "get_doc_pairs",
    "set_doc_pairs",
    "get_span_pairs",
    "get_doc_anchors",
    "get_span_anchors",
]
