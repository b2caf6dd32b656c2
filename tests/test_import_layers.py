"""Which way imports go: read from the source with ``ast`` (every import, module level or inside a function).

The store sits below the domain packages, the shared types (clocks, ids, turns) below the store, capture
produces turns that extract consumes (never the other way round), and embedding providers import the
contract in ``embed/base``, never the registry that picks them. A new arrow the wrong way fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "nous_assets"


def _imports(path: Path) -> set[str]:
    """Absolute ``nous_assets.…`` module names imported by ``path`` (relative imports resolved)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    here = parts[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            out.add(module)
            out.update(f"{module}.{a.name}" for a in node.names)
    return {name for name in out if name.startswith("nous_assets.")}


def _imports_of(folder: str) -> dict[str, set[str]]:
    return {str(p.relative_to(PACKAGE)): _imports(p) for p in sorted((PACKAGE / folder).rglob("*.py"))}


def _offenders(folder: str, forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{path} imports {name}"
        for path, names in _imports_of(folder).items()
        for name in sorted(names)
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    ]


@pytest.mark.parametrize(
    ("folder", "forbidden"),
    [
        ("store", ("nous_assets.reconcile", "nous_assets.reinforce", "nous_assets.link", "nous_assets.capture",
                   "nous_assets.extract", "nous_assets.embed", "nous_assets.retrieve")),
        ("capture", ("nous_assets.extract", "nous_assets.embed", "nous_assets.retrieve")),
        ("embed", ("nous_assets.extract", "nous_assets.retrieve")),
        ("store", ("nous_assets.observe", "nous_assets.safety")),
        ("observe", ("nous_assets.defs", "nous_assets.cli", "nous_assets.retrieve", "nous_assets.extract",
                     "nous_assets.embed", "nous_assets.safety")),
        ("safety", ("nous_assets.defs", "nous_assets.cli", "nous_assets.retrieve", "nous_assets.observe")),
        ("store", ("nous_assets.service",)),
        ("team", ("nous_assets.defs", "nous_assets.cli", "nous_assets.service")),
        ("service", ("nous_assets.defs", "nous_assets.cli", "nous_assets.extract", "nous_assets.embed",
                     "nous_assets.retrieve")),
        ("brief", ("nous_assets.store", "nous_assets.defs", "nous_assets.history", "nous_assets.retrieve",
                   "nous_assets.capture")),
        ("history", ("nous_assets.defs", "nous_assets.cli", "nous_assets.retrieve", "nous_assets.embed")),
        ("store", ("nous_assets.brief", "nous_assets.history")),
    ],
)
def test_package_does_not_import_upward(folder: str, forbidden: tuple[str, ...]) -> None:
    assert _offenders(folder, forbidden) == []


@pytest.mark.parametrize("folder", ["lifecycle", "metrics"])
def test_lifecycle_and_metrics_never_import_dagster(folder: str) -> None:
    """The archive and process-mining code is domain code: the Dagster layer calls it, never the reverse."""
    paths = sorted((PACKAGE / folder).rglob("*.py"))
    assert paths
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not {n for n in names if n.split(".")[0] == "dagster"}, path
        assert not {n for n in _imports(path) if n.startswith(("nous_assets.defs", "nous_assets.cli"))}, path


@pytest.mark.parametrize("module", ["clocks.py", "ids.py", "turns.py"])
def test_shared_types_import_nothing_of_ours(module: str) -> None:
    assert _imports(PACKAGE / module) == set()


@pytest.mark.parametrize("provider", ["local.py", "openai_embed.py"])
def test_embedding_providers_do_not_import_the_registry(provider: str) -> None:
    names = _imports(PACKAGE / "embed" / provider)
    assert "nous_assets.embed.base" in names
    assert not {n for n in names if n.startswith("nous_assets.embed.registry")}


def test_the_checker_sees_imports_inside_functions() -> None:
    """The registry imports its providers lazily; the checker must still see those arrows."""
    names = _imports(PACKAGE / "embed" / "registry.py")
    assert {"nous_assets.embed.local", "nous_assets.embed.openai_embed"} <= names


@pytest.mark.parametrize("folder", ["observe", "safety", "service", "team"])
def test_domain_packages_never_import_dagster(folder: str) -> None:
    """The observers and review run from the CLI and tests as well as from assets: no Dagster below defs/."""
    offenders = []
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names.append(node.module)
            offenders += [f"{path.name} imports {n}" for n in names if n.split(".")[0] == "dagster"]
    assert offenders == []


# --- Dagster's private modules: one wrapper, checked against the pinned version --------------------------------

INTERNALS = "defs/dagster_internals.py"


def _dagster_private_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
        found += [n for n in names if n.split(".")[0] == "dagster" and n.split(".")[1:2] and n.split(".")[1][0] == "_"]
    return found


def test_dagster_internals_are_imported_only_by_their_wrapper() -> None:
    """``dagster._core…``/``dagster._utils…`` may change in any release: product code reaches them through one
    module, so a Dagster upgrade has one place to check."""
    offenders = [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if str(path.relative_to(PACKAGE)) != INTERNALS
        for name in _dagster_private_imports(path)
    ]
    assert offenders == []
    assert _dagster_private_imports(PACKAGE / INTERNALS)  # the checker sees the wrapper's own imports


def test_the_wrapper_names_the_pinned_dagster_version() -> None:
    pins = (PACKAGE.parent / "constraints.txt").read_text(encoding="utf-8").splitlines()
    version = next(line.split("==", 1)[1] for line in pins if line.startswith("dagster=="))
    doc = ast.get_docstring(ast.parse((PACKAGE / INTERNALS).read_text(encoding="utf-8")))
    assert f"dagster {version}" in doc, f"re-check {INTERNALS} against dagster {version}, then name it there"


def test_the_wrapper_exports_what_dagster_still_has() -> None:
    from nous_assets.defs import dagster_internals

    for name in dagster_internals.__all__:
        assert getattr(dagster_internals, name) is not None
        assert f"``{name}``" in dagster_internals.__doc__, f"{name}: say what it is for"
