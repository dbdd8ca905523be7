"""The README's pictures, taken in headless Chromium (Debian's chromium and
chromium-driver, through Selenium): displaCy's span view of a document's topic segments
and the head view (``python -m spacy_attnseg view``) of the same ~500-token document with
one head selected.

    python scripts/screenshots.py figures
"""

import re
import shutil
import tempfile
from pathlib import Path

import typer
from spacy import displacy

from spacy_attnseg import load_pipeline
from spacy_attnseg.families import n_layers_heads
from spacy_attnseg.spans import span_colors
from spacy_attnseg.view import head_view_html

ROOT = Path(__file__).resolve().parent.parent
WIKITEXT = ROOT / "data" / "wikitext-2" / "wiki.test.raw"


def sample_text(articles: tuple = (0, 2, 4), paragraphs: int = 1) -> str:
    """The first paragraphs of three WikiText-2 test articles (Robert Boulter, the song
    "Kiss You", Dick Rifenburg) as plain text: three topics, one blank line between
    paragraphs."""
    text = WIKITEXT.read_text(encoding="utf8")
    chunks = re.split(r"\n = [^=\n]+ = \n", text)[1:]
    picked = []
    for number in articles:
        paras = [
            p.strip() for p in chunks[number].split("\n") if p.strip() and not p.startswith(" =")
        ]
        picked.extend(paras[:paragraphs])
    # WikiText's tokenisation undone where it is plain: "@-@" joins, " , " and " . "
    clean = [re.sub(r" @(.)@ ", r"\1", p) for p in picked]
    clean = [re.sub(r" ([,.;:)'])", r"\1", re.sub(r"\( ", "(", p)) for p in clean]
    return "\n\n".join(clean)


def full_page(driver, width: int) -> None:  # type: ignore[no-untyped-def]
    """Let the next screenshot hold the whole page."""
    height = int(driver.execute_script("return document.documentElement.scrollHeight"))
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )


def browser(width: int, height: int):  # type: ignore[no-untyped-def]
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"):
        options.add_argument(argument)
    options.add_argument(f"--window-size={width},{height}")
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


def main(output: Path = typer.Argument(..., help="Folder for the PNG files.")) -> None:
    from selenium.webdriver.common.by import By

    output.mkdir(parents=True, exist_ok=True)
    nlp = load_pipeline("default")
    nlp.add_pipe(
        "attn_head_pairs",
        config={"layers": [], "heads": [], "threshold": 0.8, "spans_key": ""},
    )
    doc = nlp(sample_text())
    print(f"{len(doc)} tokens, {len(doc.spans['attn_segments'])} segments")
    # the head shown: of those with 10 to 40 pairs, the one whose anchor is in most of them
    pairs = doc._.head_pairs
    readable = [
        a
        for a in doc._.head_anchors
        if 10 <= len(pairs.select(layer=a.layer, head=a.head)) <= 40 and a.text.isalpha()
    ]
    best = max(readable, key=lambda a: a.share)
    layer, head = best.layer, best.head
    print(f"layer {layer} head {head}: anchor {best.text!r}, share {best.share:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        spans_page = Path(tmp) / "spans.html"
        options = {"spans_key": "attn_segments", "colors": span_colors(doc, "attn_segments")}
        spans_page.write_text(
            displacy.render(doc, style="span", options=options, page=True), encoding="utf8"
        )
        view_page = Path(tmp) / "view.html"
        trf = nlp.get_pipe("attn_head_pairs").transformer_pipe()  # type: ignore[attr-defined]
        n_layers, n_heads = n_layers_heads(trf.model.transformer)
        view_page.write_text(
            head_view_html(
                doc,
                title="spacy-attnseg head view: three WikiText-2 articles",
                n_layers=n_layers,
                n_heads=n_heads,
                threshold=0.8,
                model="default",
            ),
            encoding="utf8",
        )
        driver = browser(1300, 1000)
        try:
            driver.get(spans_page.as_uri())
            full_page(driver, 1300)
            driver.save_screenshot(str(output / "displacy_segments.png"))
            driver.get(view_page.as_uri())
            full_page(driver, 1400)
            driver.find_element(By.ID, f"head-{layer}-{head}").click()
            driver.save_screenshot(str(output / "head_view.png"))
        finally:
            driver.quit()
    print(f"Wrote {output / 'displacy_segments.png'} and {output / 'head_view.png'}")


if __name__ == "__main__":
    typer.run(main)
