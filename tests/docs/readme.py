"""The README's shell blocks, extracted and run in order as one reader would run them.

A block is a fenced code block whose info string is `sh`. A block that cannot run on a
laptop alone (it needs a browser, a public receiver, another database server) is marked
on the line before its fence with `<!-- readme-test: skip (the reason) -->`; the mark is
invisible on the rendered page, and every other block must run verbatim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SKIP_MARK = re.compile(r"<!--\s*readme-test:\s*skip\s*\((?P<reason>.+?)\)\s*-->")
FENCE = re.compile(r"^```(?P<info>\S*)\s*$")


@dataclass(frozen=True)
class Block:
    number: int  # 1-based, counting the shell blocks only
    line: int  # line of the opening fence in the README
    heading: str  # the section it is in
    text: str
    skip_reason: str | None


def shell_blocks(readme: Path) -> list[Block]:
    blocks: list[Block] = []
    heading = ""
    previous = ""  # the last non-blank line before a fence
    lines = readme.read_text().splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = FENCE.match(line)
        if fence is None:
            if line.startswith("#"):
                heading = line.lstrip("#").strip()
            if line.strip():
                previous = line
            index += 1
            continue
        start = index
        index += 1
        body: list[str] = []
        while index < len(lines) and not lines[index].startswith("```"):
            body.append(lines[index])
            index += 1
        index += 1  # the closing fence
        if fence["info"] == "sh":
            skip = SKIP_MARK.search(previous)
            blocks.append(
                Block(
                    number=len(blocks) + 1,
                    line=start + 1,
                    heading=heading,
                    text="\n".join(body),
                    skip_reason=skip["reason"] if skip else None,
                )
            )
        previous = ""
    return blocks


def script_of(blocks: list[Block]) -> str:
    """One bash script running every block not marked skip, in order, in one shell (a
    block uses the variables earlier ones set), each framed by markers so a failure
    names its block."""
    parts = [
        "set -eo pipefail",
        "trap 'echo \"@@failed block $README_BLOCK at its line $LINENO\"' ERR",
    ]
    for block in blocks:
        if block.skip_reason is not None:
            continue
        parts += [
            f"README_BLOCK={block.number}",
            f"echo '@@begin {block.number}'",
            block.text,
            # curl's answers end without a newline: the marker starts a line of its own.
            f"printf '\\n@@end {block.number}\\n'",
        ]
    return "\n".join(parts) + "\n"


def outputs_of(log: str) -> dict[int, str]:
    """Each finished block's output, by block number."""
    found: dict[int, str] = {}
    for match in re.finditer(r"^@@begin (\d+)\n(.*?)^@@end \1$", log, re.S | re.M):
        found[int(match[1])] = match[2]
    return found
