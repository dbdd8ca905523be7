"""Sentence boundaries, semantic segments and head analysis from a spaCy transformer's
own attention (Halevi et al. 2026, "Self-attention vector output similarities reveal how
machines pay attention")."""

from .capture import AttentionCapture, CaptureRequest
from .components.head_pairs import AttnHeadPairs, make_attn_head_pairs
from .components.malloc_trim import MallocTrim, make_malloc_trim
from .components.segmenter import AttnSegmenter, make_attn_segmenter
from .loading import embedded_model_path, load_pipeline
from .records import chunks
from .tokenizer import RunTokenizer, ZeroWidthTokenizer

__version__ = "0.1.0"

__all__ = [
    "AttentionCapture",
    "AttnHeadPairs",
    "AttnSegmenter",
    "CaptureRequest",
    "MallocTrim",
    "RunTokenizer",
    "ZeroWidthTokenizer",
    "chunks",
    "embedded_model_path",
    "load_pipeline",
    "make_attn_head_pairs",
    "make_attn_segmenter",
    "make_malloc_trim",
]
