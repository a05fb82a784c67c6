"""The client's README runs (issue #38: its quick start raised `NameError: name
'save_cursor' is not defined`): every `python` block, in order, in one interpreter as a
reader would paste them, against the real server's demo sandbox. The placeholders a reader
fills in (`<client_id>`, `<client_secret>`) and the address are replaced; nothing else.
A block marked `<!-- readme-test: skip (reason) -->` on the line before its fence is left
out (it needs an owner at a browser, a webhook delivery or a broker)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import CLIENT_SRC, Demo, LiveServer

README = CLIENT_SRC.parent / "README.md"
SKIP = re.compile(r"<!--\s*readme-test:\s*skip\s*\((?P<reason>.+?)\)\s*-->")
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<info>\S*)\s*$")


def python_blocks(readme: Path) -> list[tuple[int, str, str | None]]:
    """(line, code, skip reason) of every python block."""
    blocks: list[tuple[int, str, str | None]] = []
    lines = readme.read_text().splitlines()
    previous, index = "", 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if fence is None:
            if lines[index].strip():
                previous = lines[index]
            index += 1
            continue
        start, body = index, []
        index += 1
        while index < len(lines) and not lines[index].strip().startswith("```"):
            body.append(lines[index])
            index += 1
        index += 1
        if fence["info"] == "python":
            skip = SKIP.search(previous)
            code = textwrap.dedent("\n".join(body))
            blocks.append((start + 1, code, skip["reason"] if skip else None))
        previous = ""
    return blocks


def test_every_python_block_of_the_readme_runs(
    server: LiveServer, demo: Demo, tmp_path: Path
) -> None:
    blocks = python_blocks(README)
    run = [(line, code) for line, code, reason in blocks if reason is None]
    assert len(run) >= 4, "the README lost its runnable examples"
    for _, _, reason in blocks:
        assert reason is None or len(reason) > 20, "a skip names what the block needs"
    parts = []
    for line, code in run:
        code = (
            code.replace("http://127.0.0.1:8080", server.root)
            .replace("<client_id>", demo.client_id)
            .replace("<client_secret>", demo.client_secret)
        )
        parts.append(f"print('@@block {line}', flush=True)\n{code}\n")
    script = tmp_path / "readme.py"
    script.write_text("\n".join(parts))
    env = {**os.environ, "PYTHONPATH": str(CLIENT_SRC)}
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    out = done.stdout
    assert out.count("@@block") == len(run)
    assert "executed unlocked" in out  # the command block's promise
    assert (tmp_path / "stream-cursor.txt").read_text().isdigit()
