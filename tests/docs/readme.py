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


# `NAME=`, `export NAME=`, `for NAME in`, `read NAME`: where a block sets a variable.
ASSIGNED = re.compile(
    r"(?:^|[\s;(&|])(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=|\bfor\s+([A-Za-z_]\w*)\s+in\b"
)
USED = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
# Set by the shell or the system, not by a reader.
SHELL_VARIABLES = frozenset({"HOME", "PATH", "PWD", "USER", "LINENO", "RANDOM"})


def unset_variables(blocks: list[Block]) -> list[tuple[Block, str]]:
    """Each `$NAME` a block uses that neither it (before the use) nor an earlier block,
    run or skipped, sets: what a reader would have to guess. A value only the reader has
    (a consent's code) is assigned at the top of its block, saying where it comes from.
    Text in single quotes is left out (`awk '{print $2}'`, a JSON body)."""
    known = set(SHELL_VARIABLES)
    missing = []
    for block in blocks:
        for line in block.text.splitlines():
            code = re.sub(r"'[^']*'", "''", line.split(" # ", 1)[0])
            if code.lstrip().startswith("#"):
                continue
            assigned = {a or b for a, b in ASSIGNED.findall(code)}
            # `A=$(... $A ...)` uses the earlier A; `A=1 B=$A` on one line is fine too.
            for name in USED.findall(code):
                if name not in known and name not in assigned:
                    missing.append((block, name))
            known |= assigned
    return missing


def script_of(blocks: list[Block]) -> str:
    """One bash script running every block not marked skip, in order, in one shell (a
    block uses the variables earlier ones set), each framed by markers so a failure
    names its block."""
    parts = [
        # -u: a variable no earlier block set is an error, as it is to a reader.
        "set -euo pipefail",
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
