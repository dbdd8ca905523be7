"""``project.yml`` as weasel (``spacy project``) reads it: every dependency and output is
one path, the repository's own files among the dependencies exist, every dependency
under ``assets/`` is an asset that ``spacy project assets`` fetches, and every workflow
step is a command."""

from __future__ import annotations

from pathlib import Path

from weasel.util import load_project_config

ROOT = Path(__file__).resolve().parents[1]
# what a clean checkout holds (the rest is made by the commands or fetched as assets)
CHECKED_IN = ("data/", "configs/", "scripts/", "paper/", "spacy_attnseg/")


def test_project_paths_are_single_and_present() -> None:
    config = load_project_config(ROOT)
    commands = config["commands"]
    made = {path for command in commands for path in command.get("outputs", [])}
    fetched = {asset["dest"] for asset in config.get("assets", [])}
    for command in commands:
        for key in ("deps", "outputs", "outputs_no_cache"):
            for path in command.get(key, []):
                # (two "${vars...}" entries in a row come back joined by ", ")
                assert ", " not in path, (command["name"], key, path)
        for path in command.get("deps", []):
            if path.startswith(CHECKED_IN) and path not in made:
                assert (ROOT / path).exists(), (command["name"], path)
            if path.startswith("assets/") and path not in made:
                assert path in fetched, (command["name"], path)
    names = {command["name"] for command in commands}
    for workflow, steps in config.get("workflows", {}).items():
        assert set(steps) <= names, workflow
