"""``mcp_server`` is a domain package: no Dagster, and the MCP SDK only in its wiring module."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "nous_assets" / "mcp_server"


def _top_level_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_no_dagster_and_the_sdk_only_in_the_wiring():
    imports = {p.name: _top_level_imports(p) for p in sorted(PACKAGE.glob("*.py"))}
    assert "server.py" in imports and {"mcp", "pydantic"} <= imports["server.py"]
    assert not [name for name, found in imports.items() if "dagster" in found]
    assert [name for name, found in imports.items() if found & {"mcp", "mcp_types"}] == ["server.py"]
