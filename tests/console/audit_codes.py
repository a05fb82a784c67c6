"""The audit action codes the code base writes, collected from its source: every call
of `audit(..., action=...)` (autoport.console.service.audit) and the values its
`action` can take, followed through string literals, conditional expressions, f-strings over a
parameter, local assignments and the enclosing function's callers."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "autoport"


def _name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


class _Module:
    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.parents: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
        self.functions = {
            node.name: node
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        }

    def enclosing(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                return node
        return None

    def values(self, expr: ast.expr, where: ast.AST) -> set[str]:
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return {expr.value}
        if isinstance(expr, ast.IfExp):
            return self.values(expr.body, where) | self.values(expr.orelse, where)
        if isinstance(expr, ast.JoinedStr):
            found = {""}
            for part in expr.values:
                if isinstance(part, ast.Constant):
                    found = {f + str(part.value) for f in found}
                elif isinstance(part, ast.FormattedValue):
                    found = {f + v for f in found for v in self.values(part.value, where)}
            return found
        if isinstance(expr, ast.Name):
            return self.name_values(expr.id, where)
        raise AssertionError(f"an audit action this collector cannot follow: {ast.dump(expr)}")

    def name_values(self, name: str, where: ast.AST) -> set[str]:
        function = self.enclosing(where)
        assert function is not None, name
        params = [a.arg for a in function.args.args]
        if params[:1] == ["self"]:  # a method: its calls name the arguments after self
            params = params[1:]
        if name in params:
            return self.argument_values(function, params.index(name), name)
        if name in [a.arg for a in function.args.kwonlyargs]:
            return self.argument_values(function, len(params) + 1_000, name)  # by keyword only
        found: set[str] = set()
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets
            ):
                found |= self.values(node.value, node)
        assert found, f"{function.name}: where does {name} come from?"
        return found

    def argument_values(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef, index: int, name: str
    ) -> set[str]:
        found: set[str] = set()
        for call in self.calls(function.name):
            if self.enclosing(call) is function:
                continue  # the function calling itself (AccountPage.audit opening a transaction)
            given = [k.value for k in call.keywords if k.arg == name]
            if given:
                found |= self.values(given[0], call)
            elif index < len(call.args):
                found |= self.values(call.args[index], call)
        return found

    def calls(self, name: str) -> Iterator[ast.Call]:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and _name(node) == name:
                yield node


def written_actions(root: Path = ROOT) -> dict[str, set[str]]:
    """action code -> the files writing it."""
    found: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        module = _Module(ast.parse(path.read_text(), str(path)))
        for call in module.calls("audit"):
            action = [k.value for k in call.keywords if k.arg == "action"]
            if not action:
                continue
            for value in module.values(action[0], call):
                found.setdefault(value, set()).add(str(path.relative_to(root.parent)))
    return found


if __name__ == "__main__":
    for code, files in sorted(written_actions().items()):
        print(code, sorted(files))
