"""The README's Python examples run as written, against the installed package, and print
what the README says they print."""

from __future__ import annotations

import contextlib
import io
import os
import re
from typing import Any, Dict, List

import pytest
from conftest import REPO, SAMPLE_TXT

README = REPO / "README.md"
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def block_with(marker: str) -> str:
    """The one README Python block that contains ``marker``."""
    found = [b for b in BLOCK.findall(README.read_text(encoding="utf8")) if marker in b]
    assert len(found) == 1, (marker, len(found))
    return found[0]


def run_blocks(blocks: List[str], namespace: Dict[str, Any]) -> List[str]:
    """Run ``blocks`` one after another in ``namespace`` (from the repository's root, as
    a reader runs them) and return the lines they print."""
    out = io.StringIO()
    here = os.getcwd()
    os.chdir(REPO)
    try:
        with contextlib.redirect_stdout(out):
            for code in blocks:
                exec(compile(code, str(README), "exec"), namespace)
    finally:
        os.chdir(here)
    return out.getvalue().splitlines()


OTHER_TOPIC = (
    "The volcano erupted twice last week. Ash clouds closed the airport for two days. "
    "Scientists expect more activity this month. Villages near the crater were evacuated."
)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_quickstart_segments_and_chunks_run_as_written() -> None:
    """Quickstart, then the topic-segment loop and the chunk example on the sample text
    (one topic: a company's history) followed by a paragraph on another, then
    malloc_trim, then the scoring example: the first line is the two sentences the
    Quickstart shows, the loop prints two segments, the second from where the other
    topic begins, and against those two topics as gold segments Pk is 0."""
    quickstart = block_with("nlp = load_pipeline()      # configs/default.cfg")
    segments = block_with('for span, score in zip(doc.spans["attn_segments"]')
    chunks = block_with("spacy_attnseg.chunks(nlp,")
    score = block_with("nlp.evaluate([Example(nlp.make_doc(text), gold)])")
    trim = block_with('nlp.add_pipe("malloc_trim", last=True)')
    text = SAMPLE_TXT.read_text(encoding="utf8").strip() + " " + OTHER_TOPIC
    namespace: Dict[str, Any] = {"text": text, "other_text": "A second text. It is short."}
    lines = run_blocks([quickstart, segments, chunks, trim], namespace)
    assert lines[0] == str(
        ["The company moved to Wooster, Ohio.", "In the early 1920s it changed to a new regime."]
    )
    # the unpunctuated example is split into more than one sentence
    assert lines[2].startswith("['we landed at noon") and lines[2].count("', '") >= 1
    segment_lines = [line for line in lines if re.match(r"^\s*\d+\.\d\d  ", line)]
    assert len(segment_lines) == len(namespace["doc"].spans["attn_segments"]) == 2
    assert segment_lines[1].endswith("  " + OTHER_TOPIC[:60])
    chunk_lines = [line for line in lines if re.match(r"^[01] \d+ ", line)]
    assert chunk_lines and chunk_lines[-1].startswith("1 ")  # the second text's chunk
    # scored against gold segments that are the two topics: Pk 0; one token off: above 0
    nlp = namespace["nlp"]
    cut = nlp.make_doc(text).char_span(len(text) - len(OTHER_TOPIC), len(text)).start
    assert [s.start for s in namespace["doc"].spans["attn_segments"]] == [0, cut]
    namespace["cut"] = cut
    assert run_blocks([score], namespace) == ["0.0"]
    namespace["cut"] = cut + 1
    assert float(run_blocks([score], namespace)[0]) > 0
    assert "malloc_trim" in namespace["nlp"].pipe_names


LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Any) -> List[str]:
    text = path.read_text(encoding="utf8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return [slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.M)]


@pytest.mark.parametrize("page", ["README.md", "docs/results.md", "docs/reference.md"])
def test_links_resolve(page: str) -> None:
    """Every relative link of the page names a file of the repository, and every
    #anchor a heading of its page."""
    path = REPO / page
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf8"), flags=re.S)
    checked = 0
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        assert linked.exists(), (page, target)
        if anchor:
            assert anchor in anchors(linked), (page, target)
        checked += 1
    assert checked >= 10
