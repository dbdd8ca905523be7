"""Seeing the results: displaCy span groups and the self-contained head view.

The head view is also opened in a real browser (headless Chromium through Selenium):
a click on a grid cell selects a head, and the links it draws are checked against
``doc._.head_pairs``. That test is skipped, with the reason, where no browser is
installed (``make test`` installs Debian's chromium and chromium-driver where it can).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from conftest import long_sample_text, run_cli
from spacy import displacy
from spacy.tokens import DocBin

from spacy_attnseg import load_pipeline
from spacy_attnseg.spans import score_label, span_colors
from spacy_attnseg.view import head_view_data, head_view_html

THRESHOLD = 0.8
HOSTILE = (
    'He wrote "</script><script>window.hacked = 1</script>" and __DATA__ and __TITLE__. '
    "Then <b>bold</b> & more. A second sentence follows here.\n\nA new paragraph starts."
)


@pytest.fixture(scope="module")
def view_nlp() -> Any:
    """The default pipeline with attn_head_pairs on every layer and head."""
    nlp = load_pipeline("default")
    nlp.add_pipe(
        "attn_head_pairs",
        config={"layers": [], "heads": [], "threshold": THRESHOLD, "spans_key": ""},
    )
    return nlp


@pytest.fixture(scope="module")
def view_doc(view_nlp: Any) -> Any:
    doc = view_nlp(long_sample_text(2600))
    assert 450 <= len(doc) <= 700
    return doc


def top_pairs(doc: Any, layer: int, head: int, k: int) -> List[Tuple[int, int]]:
    """The k pairs of a head with the highest scores (ties: the earlier pair), written
    out from the pair records."""
    rows = [r for r in doc._.head_pairs.to_records(doc) if (r["layer"], r["head"]) == (layer, head)]
    best = sorted(rows, key=lambda r: (-r["score"], r["i"], r["j"]))[:k]
    return sorted((r["i"], r["j"]) for r in best)


def page_data(page: str) -> Dict[str, Any]:
    found = re.findall(
        r'<script type="application/json" id="attnseg-data">(.*?)</script>', page, re.S
    )
    assert len(found) == 1
    return json.loads(found[0])


# --- displaCy ------------------------------------------------------------------------


def test_displacy_renders_segments_and_sentences(default_nlp: Any, sample_text: str) -> None:
    doc = default_nlp(sample_text)
    segments, sents = doc.spans["attn_segments"], doc.spans["attn_sents"]
    assert [(s.start, s.end) for s in sents] == [(s.start, s.end) for s in doc.sents]
    for group, kind in ((segments, "SEG"), (sents, "SENT")):
        scores = group.attrs["scores"]
        assert len(scores) == len(group) > 1
        assert [s.label_ for s in group] == [f"{kind} {score:.2f}" for score in scores]
        html = displacy.render(doc, style="span", options={"spans_key": group.name})
        assert all(score_label(kind, score) in html for score in scores)
    # consecutive segments in alternating colours (each label its own here)
    colors = span_colors(doc, "attn_segments")
    assert len(colors) == len(segments) == len({s.label_ for s in segments})
    assert [colors[s.label_] for s in segments] == [
        ("#c6dbef", "#c7e9c0")[i % 2] for i in range(len(segments))
    ]
    html = displacy.render(
        doc, style="span", options={"spans_key": "attn_segments", "colors": colors}
    )
    assert all(color in html for color in colors.values())
    assert span_colors(doc, "no such group") == {} == span_colors(default_nlp(""), "attn_segments")
    # the labels and scores survive a DocBin
    (back,) = DocBin(store_user_data=True, docs=[doc]).get_docs(default_nlp.vocab)
    assert [s.label_ for s in back.spans["attn_segments"]] == [s.label_ for s in segments]
    assert back.spans["attn_sents"].attrs["scores"] == sents.attrs["scores"]


# --- the page's data -----------------------------------------------------------------


def test_head_view_data_matches_the_doc(view_doc: Any) -> None:
    doc = view_doc
    data = head_view_data(doc, n_layers=6, n_heads=12, max_pairs=40)
    assert "".join(text + ws for text, ws, _ in data["tokens"]) == doc.text
    assert [s[:2] for s in data["sents"]] == [[s.start, s.end] for s in doc.sents]
    assert [s[:2] for s in data["segments"]] == [
        [s.start, s.end] for s in doc.spans["attn_segments"]
    ]
    pairs = doc._.head_pairs
    assert set(data["heads"]) == {f"{layer}-{head}" for layer, head in pairs.heads()}
    anchors = {(a.layer, a.head): a for a in doc._.head_anchors}
    capped = 0
    for key, entry in data["heads"].items():
        layer, head = map(int, key.split("-"))
        n = len(pairs.select(layer=layer, head=head))
        assert entry["n_pairs"] == n
        assert [tuple(p[:2]) for p in entry["pairs"]] == top_pairs(doc, layer, head, 40)
        assert entry["anchor"]["text"] == anchors[(layer, head)].text
        capped += n > 40
    assert capped > 0  # the cap was exercised


def test_head_view_page_is_self_contained_and_escapes_text(view_nlp: Any) -> None:
    doc = view_nlp(HOSTILE)
    page = head_view_html(doc, title="a <title> & more", n_layers=6, n_heads=12)
    assert page.count("</script>") == 2  # the data's and the code's, none from the text
    assert "<title>a &lt;title&gt; &amp; more</title>" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "@import" not in page
    data = page_data(page)
    assert data == json.loads(json.dumps(head_view_data(doc, n_layers=6, n_heads=12)))
    assert "".join(t + ws for t, ws, _ in data["tokens"]) == HOSTILE


def test_view_command_writes_the_page(tmp_path: Path) -> None:
    output = tmp_path / "view.html"
    result = run_cli(["view", "data/sample.txt", "-o", str(output), "--max-pairs", "5"])
    assert result.returncode == 0, result.stderr[-3000:]
    data = page_data(output.read_text(encoding="utf8"))
    assert (data["n_layers"], data["n_heads"]) == (6, 12)
    assert data["threshold"] == THRESHOLD
    assert data["segments"] and data["sents"]
    assert len(data["heads"]) > 10
    assert all(len(e["pairs"]) == min(5, e["n_pairs"]) for e in data["heads"].values())


# --- in a real browser ---------------------------------------------------------------


def browser(scratch: Path) -> Any:
    """A headless Chromium driven by Selenium, or a skip saying what is missing.

    Its profile and the temporary folders it makes go under ``scratch``, so that no run
    leaves them behind. Chromium's singleton socket goes there too, and a Unix socket's
    path holds at most 107 bytes: ``scratch`` must be a short path (pytest's ``tmp_path``,
    a level deeper in a pytest-xdist worker, can be too long).
    """
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.skip(
            "no headless browser: install Debian's chromium and chromium-driver "
            "(`make browser`, as root) to run the head view in a real browser"
        )
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
        f"--user-data-dir={scratch / 'profile'}",
    ):
        options.add_argument(argument)
    env = {**os.environ, "TMPDIR": str(scratch)}
    return webdriver.Chrome(service=Service(driver, env=env), options=options)


def test_head_view_in_a_browser(view_doc: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    doc = view_doc
    max_pairs = 60
    page = tmp_path / "view.html"
    page.write_text(
        head_view_html(doc, n_layers=6, n_heads=12, max_pairs=max_pairs, threshold=THRESHOLD),
        encoding="utf8",
    )
    counts = {
        (layer, head): len(doc._.head_pairs.select(layer=layer, head=head))
        for layer, head in doc._.head_pairs.heads()
    }
    few = min((h for h, n in counts.items() if n <= max_pairs), key=lambda h: -counts[h])
    many = max(counts, key=lambda h: counts[h])
    assert counts[many] > max_pairs
    scratch = tempfile.TemporaryDirectory(prefix="attnseg-view-")
    driver = browser(Path(scratch.name))
    try:
        driver.get(page.as_uri())
        assert driver.execute_script("return document.body.dataset.ready") == "1"
        assert len(driver.find_elements(By.CSS_SELECTOR, "#grid button.cell")) == 6 * 12
        assert not driver.find_elements(By.CSS_SELECTOR, "path.pair")  # nothing chosen yet
        segments = driver.find_elements(By.CSS_SELECTOR, "#text .segment")
        assert len(segments) == len(doc.spans["attn_segments"])
        scores = doc.spans["attn_segments"].attrs["scores"]
        for box, score in list(zip(segments, scores, strict=True))[1:]:
            assert f"boundary score {score:.2f}" in box.text
        assert len(driver.find_elements(By.CSS_SELECTOR, "#text .sent-end")) == len(list(doc.sents))
        for layer, head in (few, many):
            driver.find_element(By.ID, f"head-{layer}-{head}").click()
            drawn = sorted(
                (int(p.get_attribute("data-i")), int(p.get_attribute("data-j")))
                for p in driver.find_elements(By.CSS_SELECTOR, "path.pair")
            )
            assert drawn == top_pairs(doc, layer, head, max_pairs)
            assert (
                driver.find_elements(By.CSS_SELECTOR, ".cell.selected")[0].get_attribute("id")
                == f"head-{layer}-{head}"
            )
            anchor = next(a for a in doc._.head_anchors if (a.layer, a.head) == (layer, head))
            marked = driver.find_elements(By.CSS_SELECTOR, ".tok.anchor")
            assert len(marked) == sum(t.lower_ == anchor.text for t in doc)
            assert f"Layer {layer}, head {head}" in driver.find_element(By.ID, "info").text
        shot = tmp_path / "view.png"
        driver.save_screenshot(str(shot))
        assert shot.stat().st_size > 20_000
        assert driver.execute_script("return window.hacked === undefined")
    finally:
        driver.quit()
        scratch.cleanup()
