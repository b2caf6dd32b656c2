"""Which way imports go: read from the source with ``ast`` (every import, module level or inside a function).

The store sits below the domain packages, the shared types (clocks, ids, turns) below the store, capture
produces turns that extract consumes (never the other way round), and embedding providers import the
contract in ``embed/base``, never the registry that picks them. A new arrow the wrong way fails here.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.imports import imports, module_name

PACKAGE = Path(__file__).resolve().parents[1] / "nous_assets"


def _imports(path: Path) -> set[str]:
    """Absolute ``nous_assets.…`` module names imported by ``path`` (relative imports resolved)."""
    return {name for name in imports(path) if name.startswith("nous_assets.")}


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
        ("pipeline", ("nous_assets.defs", "nous_assets.cli", "nous_assets.service", "nous_assets.team")),
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


@pytest.mark.parametrize("folder", ["observe", "safety", "service", "team", "pipeline"])
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


# --- ARCHITECTURE.md's "may import" table, checked against the real import graph ------------------------------
#
# Each row's first column names modules (`x.py`) and packages (`x/`); its last column is a comma-separated list
# of what they may import (parenthesised notes are explanations): a row or a module in any other row, `shared`
# (the first three rows), `every domain package` (every row that is not the Dagster layer, the CLI or the
# benchmarks), `as `defs/`` (what `defs/` may, and `defs/` itself), `everything`, `dagster`, `resolver…` (the
# stdlib-only resolver, which anything may import), `the standard library only`, `nothing of `nous_assets``.

ARCHITECTURE = PACKAGE.parent / "ARCHITECTURE.md"
NOTHING = ("the standard library only", "nothing of nous_assets")
AGGREGATES = ("shared", "every domain package", "everything", "as defs/")


@dataclass
class Row:
    label: str  # the first column as written
    keys: list[str]  # module names it covers: nous_assets.x, nous_assets.x.y, or resolver
    allows: list[str]  # the last column's items, parentheses dropped


def _rows() -> list[Row]:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        keys = [_key(name) for name in re.findall(r"`([^`]+)`", cells[0])]
        allows = cells[-1]
        while re.search(r"\([^()]*\)", allows):
            allows = re.sub(r"\s*\([^()]*\)", "", allows)
        rows.append(Row(cells[0], keys, [a.strip().replace("`", "") for a in re.split(r"[,;]", allows) if a.strip()]))
    return rows


def _key(name: str) -> str:
    """`store/` -> nous_assets.store, `defs/team/` -> nous_assets.defs.team, `turns.py` -> nous_assets.turns."""
    if name.rstrip("/") == "resolver" or name.startswith("resolver."):
        return "resolver"
    return "nous_assets." + name.rstrip("/").removesuffix(".py").replace("/", ".")


def _row_of(rows: list[Row], module: str) -> int | None:
    """The row covering ``module``: the longest key it falls under."""
    best, length = None, -1
    for i, row in enumerate(rows):
        for key in row.keys:
            if (module == key or module.startswith(key + ".")) and len(key) > length:
                best, length = i, len(key)
    return best


def _module_files() -> dict[str, Path]:
    files = {}
    for root in (PACKAGE, PACKAGE.parent / "resolver"):
        for path in sorted(root.rglob("*.py")):
            files[module_name(path)] = path
    return files


def _graph(rows: list[Row]) -> tuple[dict[int, set[int]], dict[int, set[str]], list[str]]:
    """(row -> rows it imports, row -> its modules importing dagster, modules no row covers)."""
    edges: dict[int, set[int]] = {i: set() for i in range(len(rows))}
    dagster: dict[int, set[str]] = {i: set() for i in range(len(rows))}
    uncovered = []
    for module, path in _module_files().items():
        if module == "nous_assets":
            continue
        here = _row_of(rows, module)
        if here is None:
            uncovered.append(str(path.relative_to(PACKAGE.parent)))
            continue
        for name in imports(path):
            if name.split(".")[0] == "dagster":
                dagster[here].add(module)
            elif name.startswith("nous_assets.") and (there := _row_of(rows, name)) is not None and there != here:
                edges[here].add(there)
    return edges, dagster, uncovered


def _allowed(rows: list[Row], i: int, seen: frozenset[int] = frozenset()) -> tuple[set[int], bool, list[str]]:
    """(rows row ``i`` may import, whether it may import dagster, items of its last column nobody understands)."""
    domain = {j for j, r in enumerate(rows) if not {"everything", "every domain package", "as defs/"} & set(r.allows)
              and "nous_assets.defs" not in r.keys and "resolver" not in r.keys}  # fmt: skip
    allowed: set[int] = set()
    dagster, unknown = False, []
    for item in rows[i].allows:
        if item == "everything":
            return set(range(len(rows))), True, []
        if item in NOTHING or item.startswith("resolver"):
            continue
        if item == "dagster":
            dagster = True
        elif item == "shared":
            allowed |= {0, 1, 2}
        elif item == "every domain package":
            allowed |= domain
        elif item == "as defs/":
            defs = _row_of(rows, "nous_assets.defs")
            assert defs is not None and defs not in seen
            more, dagster_too, _ = _allowed(rows, defs, seen | {i})
            allowed |= more | {defs}
            dagster = dagster or dagster_too
        elif (j := _row_of(rows, _key(item))) is not None:
            allowed.add(j)
        else:
            unknown.append(item)
    return allowed, dagster, unknown


def test_the_table_parses() -> None:
    rows = _rows()
    assert len(rows) >= 20
    assert rows[0].keys[0] == "nous_assets.turns" and rows[2].keys[0] == "nous_assets.settings"  # `shared`
    unknown = [f"{r.label}: {item!r}" for i, r in enumerate(rows) for item in _allowed(rows, i)[2]]
    assert unknown == [], "ARCHITECTURE's last column names something that is no module, package or rule"


def test_every_row_names_modules_that_exist() -> None:
    files = _module_files()
    stale = [f"{r.label}: {k}" for r in _rows() for k in r.keys if not any(m == k or m.startswith(k + ".")
                                                                          for m in files)]  # fmt: skip
    assert stale == [], "ARCHITECTURE's table names modules that are gone: update the row"


def test_every_module_has_a_row() -> None:
    uncovered = _graph(_rows())[2]
    assert uncovered == [], f"add a row to ARCHITECTURE.md's table for: {', '.join(uncovered)}"


def test_imports_follow_the_table() -> None:
    """Every import between rows is one its row's last column allows: a new arrow needs the table to say so."""
    rows = _rows()
    edges = _graph(rows)[0]
    wrong = []
    for i, targets in edges.items():
        allowed = _allowed(rows, i)[0]
        wrong += [f"{rows[i].label} imports {rows[j].label}" for j in sorted(targets - allowed)]
    assert wrong == [], "either the import is wrong or ARCHITECTURE.md's 'may import' column needs the name"


def test_the_table_names_no_import_that_is_not_there() -> None:
    """A name in the last column (not `shared` or another group) is one the row really imports: no stale arrows."""
    rows = _rows()
    edges, dagster, _ = _graph(rows)
    stale = []
    for i, row in enumerate(rows):
        for item in row.allows:
            if item in NOTHING or item in AGGREGATES or item.startswith("resolver"):
                continue
            if item == "dagster":
                stale += [] if dagster[i] else [f"{row.label}: dagster"]
            elif (j := _row_of(rows, _key(item))) is not None and j != i and j not in edges[i]:
                stale.append(f"{row.label}: {item}")
    assert stale == [], "ARCHITECTURE.md's 'may import' names an import the code no longer has"


def test_no_dagster_outside_the_rows_that_say_so() -> None:
    """Domain packages never import Dagster: only rows whose last column says `dagster` (or `everything`) may."""
    rows = _rows()
    dagster = _graph(rows)[1]
    offenders = [f"{m} ({rows[i].label})" for i, modules in dagster.items() if not _allowed(rows, i)[1]
                 for m in sorted(modules)]  # fmt: skip
    assert offenders == []
    assert any(dagster.values())  # the checker sees the Dagster layer's own imports


def test_the_checker_maps_modules_to_rows() -> None:
    rows = [Row("a", ["nous_assets.defs"], []), Row("b", ["nous_assets.defs.team"], []), Row("c", ["resolver"], [])]
    assert _row_of(rows, "nous_assets.defs.team.assets") == 1  # the longer key wins
    assert _row_of(rows, "nous_assets.defs.backfill") == 0
    assert _row_of(rows, "resolver.paths") == 2
    assert _row_of(rows, "nous_assets.definitions") is None
    assert _key("defs/team/") == "nous_assets.defs.team" and _key("turns.py") == "nous_assets.turns"
