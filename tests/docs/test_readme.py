"""The README runs: every shell block, verbatim and in order, against a real
`autoport serve` started from a fresh data directory, as a newcomer would do after
`make run` (issue #16).

The blocks talk to http://127.0.0.1:8080 as written. So that port is free whatever else
this machine runs, the server and the blocks run in a network namespace of their own
(`unshare --net`, which needs root, as CI has): a fresh loopback where the README's
defaults hold. Blocks marked `<!-- readme-test: skip (reason) -->` are listed, not run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import service_missing
from tests.docs.readme import Block, outputs_of, script_of, shell_blocks, unset_variables

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

# What a reader sees when each block worked, by the section the block is in: the README's
# promises, checked on the output of the run rather than on the README's own comments.
EXPECTED = {
    "The sandbox: a living car in two minutes": ['"vin":"SBXPSRGC89T9TK2VN"', "data: {"],
    "Applications and tokens (OAuth 2.0)": ["client_secret", '"token_type":"bearer"'],
    "Vehicle commands": ['"status":"executed"'],
    "Fleet clearance in the sandbox": ['"status":"approved"', '"status":"revoking"'],
    "Vehicle data: ingest, pull, history": ['"accepted_count":2', '"values":[{"data":0.82'],
    "Webhooks": ['"secret":"whsec_', '"ping":{"delivery_id":'],
}
DEMO_EV = "SBXPSRGC89T9TK2VN"


def _isolated_loopback_available() -> str | None:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "unshare and ip (util-linux, iproute2) are needed for a private loopback"
    probe = subprocess.run(
        ["unshare", "--net", "ip", "link", "set", "lo", "up"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        return f"cannot create a network namespace (needs root): {probe.stderr.strip()}"
    return None


def _runner(readme_script: Path) -> str:
    """Start the server as `make run` does (its installed command, defaults, data in
    ./data), wait until it is ready, run the README's blocks, stop the server."""
    return f"""
set -u
ip link set lo up
.venv/bin/autoport serve > serve.log 2>&1 &
server=$!
for _ in $(seq 120); do curl -sf http://127.0.0.1:8080/readyz > /dev/null && break; sleep 0.5; done
curl -sf http://127.0.0.1:8080/readyz > /dev/null \
  || {{ echo '@@server never ready'; cat serve.log; exit 3; }}
bash {readme_script}
status=$?
# The demo EV as the README left it (its "Script the car" block must put it back).
admin=$(.venv/bin/autoport admin-token --rotate --json | jq -r .admin_token)
echo "@@demo-ev $(curl -s http://127.0.0.1:8080/admin/v1/sandbox/vehicles/{DEMO_EV} \
  -H "Authorization: Bearer $admin")"
kill -TERM $server; wait $server
exit $status
"""


@pytest.mark.timeout(300)
def test_every_readme_shell_block_runs_verbatim_in_order(tmp_path: Path) -> None:
    reason = _isolated_loopback_available()
    if reason is not None:
        service_missing(reason)
    blocks = shell_blocks(README)
    run = [block for block in blocks if block.skip_reason is None]
    assert len(run) >= 6, "the README lost its runnable examples"

    work = tmp_path / "reader"
    work.mkdir()
    # The reader's clone after `make run`: the installed venv (this interpreter's).
    (work / ".venv").symlink_to(Path(sys.prefix))
    script = work / "readme.sh"
    script.write_text(script_of(blocks))
    env = {key: value for key, value in os.environ.items() if not key.startswith("AUTOPORT_")}
    # A newcomer's PATH: no installed `autoport` on it (the README must say .venv/bin/).
    searched = os.environ.get("PATH", "").split(":")
    path = [d for d in searched if d and not (Path(d) / "autoport").exists()]
    env["PATH"] = ":".join([*path, "/usr/sbin", "/sbin"])
    result = subprocess.run(
        ["unshare", "--net", "bash", "-c", _runner(script)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = result.stdout + result.stderr
    outputs = outputs_of(result.stdout)
    failed = [block for block in run if block.number not in outputs]
    assert result.returncode == 0 and not failed, _report(failed, log, work)

    for block in run:
        assert "Internal Server Error" not in outputs[block.number], _describe(block)
    for heading, promises in EXPECTED.items():
        said = "".join(outputs[b.number] for b in run if b.heading == heading)
        for promise in promises:
            assert promise in said, f"README section {heading!r} did not show {promise!r}:\n{said}"

    # The car the README scripted is back as the demo made it: the sections after it
    # (and the reader's next hour) read it. It once stayed in privacy mode (issue #38).
    [line] = [line for line in result.stdout.splitlines() if line.startswith("@@demo-ev ")]
    ev = json.loads(line.removeprefix("@@demo-ev "))
    assert ev["behaviour"]["privacy_mode"] is False, ev["behaviour"]
    assert ev["behaviour"]["offline"] is False and ev["behaviour"]["latency_seconds"] == 0
    assert ev["failures"] == {} and ev["pinned"] == {}, ev
    simulation = ev["simulation"]
    assert (simulation["scenario"], simulation["seed"], simulation["time_scale"]) == (
        "driving",
        101,
        1.0,
    )
    assert simulation["running"] and simulation["mode"] != "crashed", simulation


def test_every_variable_a_block_uses_is_set_by_it_or_an_earlier_block() -> None:
    """A reader runs the blocks in order: `$APP_ID`, `$ADMIN_TOKEN`, `$PASSWORD` that no
    block set (issue #38) were guesses. Skipped blocks count too: a value only the reader
    has is assigned at the top of its block, saying where it comes from."""
    missing = unset_variables(shell_blocks(README))
    assert missing == [], [f"{_describe(block)} uses ${name}" for block, name in missing]


BARE_AUTOPORT = re.compile(r"(?:^|[\s;|&(])autoport\s")
WRITTEN = re.compile(r"(?:\d?>>?|\btee\s+(?:-a\s+)?)\s*([^\s|;&)]+)")


def test_blocks_call_the_installed_command_and_write_no_tracked_files() -> None:
    """`make run` puts `autoport` in .venv/bin, not on PATH (`autoport: command not
    found`); and a block that saves credentials to a file must name one git ignores, or
    the client secret ends up in a commit."""
    for block in shell_blocks(README):
        for line in block.text.splitlines():
            code = re.sub(r"'[^']*'|\"[^\"]*\"", "''", line.split(" # ", 1)[0])
            if code.lstrip().startswith("#"):
                continue
            assert not BARE_AUTOPORT.search(code), f"{_describe(block)}: {line.strip()}"
            for target in WRITTEN.findall(code):
                if target in ("/dev/null", "&1", "&2"):
                    continue
                ignored = subprocess.run(
                    ["git", "check-ignore", "-q", "--no-index", target], cwd=ROOT
                )
                assert ignored.returncode == 0, f"{_describe(block)} writes {target}"


def test_skips_name_their_reason_and_every_walk_through_runs() -> None:
    """A skipped block says what it needs from outside; each walk-through section keeps
    blocks that run (its promises above are checked on them)."""
    blocks = shell_blocks(README)
    for block in blocks:
        if block.skip_reason is not None:
            assert len(block.skip_reason) > 20, _describe(block)
    for heading in EXPECTED:
        assert any(b.heading == heading and b.skip_reason is None for b in blocks), heading


def _describe(block: Block) -> str:
    return f"README block {block.number} (line {block.line}, section {block.heading!r})"


def _report(failed: list[Block], log: str, work: Path) -> str:
    first = failed[0] if failed else None
    where = _describe(first) if first else "the run"
    server_log = work / "serve.log"
    tail = server_log.read_text()[-3000:] if server_log.exists() else ""
    return f"{where} failed:\n{log[-6000:]}\n--- serve.log ---\n{tail}"
