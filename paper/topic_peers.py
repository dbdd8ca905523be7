"""Topic segmenters that ``attn_segmenter``'s segments are compared with. Each takes the
pipeline's own sentences (a list of sentence texts, or a processed Doc) and returns the
indices of the sentences that start a segment (0 first).

* ``nltk_texttiling``: NLTK's TextTiling (word-overlap blocks; every sentence given as a
  paragraph, since NLTK only places boundaries at paragraph breaks);
* ``SecondPass``: every sentence encoded on its own by the pipeline's transformer (a
  second model pass) and mean-pooled; then TextTiling or the component's partition on
  those vectors, or chonkie's ``SemanticChunker`` with them as its embeddings.
"""

from __future__ import annotations

import bisect
from typing import Any, Dict, List, Optional, Sequence

import numpy

from spacy_attnseg import topics


def stop_words() -> List[str]:
    from spacy.lang.en.stop_words import STOP_WORDS

    return sorted(STOP_WORDS)


def starts_from_offsets(
    sentences: Sequence[str], sep: int, piece_starts: Sequence[int]
) -> List[int]:
    """Sentence indices at character offsets of pieces of ``sep.join(sentences)``."""
    offsets, position = [], 0
    for sentence in sentences:
        offsets.append(position)
        position += len(sentence) + sep
    starts = {0}
    for char in piece_starts:
        starts.add(min(bisect.bisect_left(offsets, char), len(offsets) - 1))
    return sorted(starts)


def nltk_texttiling(sentences: Sequence[str], w: int = 20, k: int = 10) -> Optional[List[int]]:
    """NLTK TextTiling's segment starts; None where NLTK refuses the text (too short)."""
    from nltk.tokenize import TextTilingTokenizer

    tiler = TextTilingTokenizer(w=w, k=k, stopwords=stop_words())
    try:
        pieces = tiler.tokenize("\n\n".join(sentences))
    except ValueError:
        return None
    ends = numpy.cumsum([len(p) for p in pieces[:-1]]).tolist()
    return starts_from_offsets(sentences, 2, ends)


class SecondPass:
    """Sentence vectors from a second run of ``nlp``'s transformer, one sentence at a
    time (mean of the last hidden state over the sentence's wordpieces)."""

    def __init__(self, nlp: Any) -> None:
        self.nlp = nlp
        self.trf = nlp.get_pipe("transformer")
        self.cache: Dict[str, numpy.ndarray] = {}

    def vectors(self, sentences: Sequence[str]) -> numpy.ndarray:
        """One vector per text (texts seen before come from a cache, so that peers run
        on the same document share one second pass)."""
        from thinc.api import to_numpy

        new = [s for s in dict.fromkeys(sentences) if s not in self.cache]
        for text, sdoc in zip(new, self.trf.pipe(self.nlp.make_doc(s) for s in new), strict=True):
            hidden = to_numpy(sdoc._.trf_data.model_output.last_hidden_state)
            rows = numpy.unique(numpy.asarray(sdoc._.trf_data.align.dataXd))
            flat = hidden.reshape((-1, hidden.shape[-1]))
            self.cache[text] = flat[rows].mean(0) if len(rows) else numpy.zeros(flat.shape[1])
        return numpy.array([self.cache[s] for s in sentences], dtype="float32")

    def clear(self) -> None:
        self.cache.clear()

    def texttiling(self, sentences: Sequence[str]) -> List[int]:
        starts, _ = topics.segment(
            self.vectors(sentences), method="texttiling", window=3, cutoff=0.5, min_sents=1
        )
        return starts

    def partition(self, sentences: Sequence[str], penalty: float = topics.PENALTY) -> List[int]:
        starts, _ = topics.segment(self.vectors(sentences), penalty=penalty, min_sents=2)
        return starts

    def embeddings(self) -> Any:
        """The same vectors as a chonkie ``BaseEmbeddings`` (chonkie must be installed)."""
        from chonkie.embeddings import BaseEmbeddings

        owner = self

        class PipelineEmbeddings(BaseEmbeddings):  # type: ignore[misc,valid-type]
            def embed(self, text: str) -> numpy.ndarray:
                return owner.vectors([text])[0]

            def embed_batch(self, texts: List[str]) -> List[numpy.ndarray]:
                return list(owner.vectors(texts)) if texts else []

            @property
            def dimension(self) -> int:
                return int(owner.vectors(["a"]).shape[1])

            def get_tokenizer(self) -> Any:
                return owner.trf.model.tokenizer

        return PipelineEmbeddings()

    def chonkie(self, sentences: Sequence[str], threshold: float) -> List[int]:
        """chonkie's SemanticChunker on the sentences joined by spaces (it splits them
        again itself), its chunk starts mapped to the sentences."""
        from chonkie import SemanticChunker

        chunker = SemanticChunker(
            embedding_model=self.embeddings(), threshold=threshold, chunk_size=100_000
        )
        text = " ".join(sentences)
        chunks = chunker.chunk(text)
        return starts_from_offsets(sentences, 1, [c.start_index for c in chunks[1:]])
