"""The tests as a codebase: what two test modules share lives in a helper module
(`tests/helpers/`, or a feature's own non-test module such as `tests/consent/flow.py`),
never in a test module another one imports: importing a test module runs its tests
twice under another name and ties the two files' fixtures together. The listed imports
still do, each to be moved; the list only shrinks."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import tests

TESTS = Path(tests.__file__).parent
CLIENT_TESTS = TESTS.parent / "clients" / "python" / "tests"
_TEST_MODULE = re.compile(r"(^|\.)test_\w+$")

# (importing file, imported test module) still to be moved into helpers.
KNOWN: frozenset[tuple[str, str]] = frozenset(
    {
        ("tests/api/test_docs_browser.py", "tests.consent.test_browser"),
        ("tests/commands/test_hot_route_twin.py", "tests.vehicle_data.test_hot_route_twin"),
        ("tests/oauth/test_token_hot_route_twin.py", "tests.vehicle_data.test_hot_route_twin"),
        ("tests/sandbox/test_pull.py", "tests.vehicle_data.test_freshness"),
        ("tests/vehicle_data/test_freshness.py", "tests.vehicle_data.test_pull"),
        ("tests/vehicle_data/test_hot_route_twin.py", "tests.vehicle_data.test_pull"),
        ("tests/commands/test_consent_browser.py", "tests.consent.test_browser"),
        ("tests/commands/test_kill_nine.py", "tests.sandbox.test_serve_demo"),
        ("tests/consent/test_production_verification.py", "tests.fleet.test_template_connector"),
        ("tests/owner/test_production_login.py", "tests.consent.test_production_verification"),
        ("tests/owner/test_production_login.py", "tests.fleet.test_template_connector"),
        ("tests/security/test_brand_labels.py", "tests.security.test_clearance"),
        ("tests/security/test_limits.py", "tests.kit.test_ratelimit_redis"),
        ("tests/security/test_limits.py", "tests.security.test_consent"),
        ("tests/security/test_redirect_uris.py", "tests.consent.test_browser"),
    }
)


def _files() -> list[Path]:
    return sorted([*TESTS.rglob("*.py"), *CLIENT_TESTS.rglob("*.py")])


def _name(path: Path) -> str:
    return path.relative_to(TESTS.parent).as_posix()


def imported_test_modules(source: str) -> Iterator[str]:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("tests.") and _TEST_MODULE.search(node.module):
                yield node.module
            elif node.module.startswith("tests"):
                for alias in node.names:
                    if alias.name.startswith("test_"):
                        yield f"{node.module}.{alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            # `from .test_flow import post` (named relative: `.test_flow`), or
            # `from . import test_flow`.
            dots = "." * node.level
            if node.module and _TEST_MODULE.search(node.module):
                yield dots + node.module
            elif node.module is None:
                yield from (dots + a.name for a in node.names if a.name.startswith("test_"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("tests.") and _TEST_MODULE.search(alias.name):
                    yield alias.name


def test_no_test_module_is_imported_by_another() -> None:
    found = {
        (_name(path), module)
        for path in _files()
        for module in imported_test_modules(path.read_text())
    }
    new = sorted(found - KNOWN)
    stale = sorted(KNOWN - found)
    assert new == [], f"test modules imported by others (move what they share): {new}"
    assert stale == [], f"moved, remove from KNOWN: {stale}"


def test_helpers_are_defined_once() -> None:
    """A port, a server start and a browser come from tests/helpers/ only."""
    shared = {"free_port", "wait_until_up", "chromium_browser", "axe_violations"}
    places = [
        f"{_name(path)}: {node.name}"
        for path in _files()
        if "helpers" not in path.parts
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and node.name in shared
    ]
    assert places == [], f"defined outside tests/helpers/: {places}"


def test_the_checker_sees_a_test_module_import() -> None:
    probe = (
        "from tests.consent.test_flow import post\n"
        "from tests.vehicle_data import test_pull\n"
        "import tests.oauth.test_client_auth\n"
        "from tests.helpers.ports import free_port\n"
        "from tests.consent.flow import start\n"
        "from .test_sandbox_page import created\n"
        "from . import test_live\n"
        "from .sandbox import created\n"
    )
    assert sorted(imported_test_modules(probe)) == [
        ".test_live",
        ".test_sandbox_page",
        "tests.consent.test_flow",
        "tests.oauth.test_client_auth",
        "tests.vehicle_data.test_pull",
    ]
