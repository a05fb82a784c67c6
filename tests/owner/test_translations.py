"""The portal's words come from its gettext catalog: every template message has a German
translation that keeps its placeholders, and the catalog is in step with the templates."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from autoport.owner import pages

PLACEHOLDER = re.compile(r"%\((\w+)\)s")
ROOT = Path(__file__).resolve().parents[2]


def test_every_template_message_is_translated_to_german_with_its_placeholders() -> None:
    german = pages.translations("de-DE")
    missing, broken = [], []
    for message in pages.extract_messages():
        if not message.id or not isinstance(message.id, str):
            continue
        translated = german.gettext(message.id)
        if translated == message.id and message.id not in {"Status"}:
            missing.append(message.id)
        if set(PLACEHOLDER.findall(translated)) != set(PLACEHOLDER.findall(message.id)):
            broken.append(message.id)
    assert missing == [] and broken == []


def test_the_catalog_is_in_step_with_the_templates() -> None:
    done = subprocess.run(
        [sys.executable, "scripts/owner_messages.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
