"""What ships in the wheel is product code: a module only tests or benchmarks import belongs in ``tests/support/``.

Read from the source with ``ast``: a module of ``nous_assets`` or ``resolver`` must be imported by another product
module, or named as an entry point (``pyproject.toml``, ``workspace.yaml``, ``deploy/``, the ``Makefile``). The
embedded PostgreSQL, the gitleaks secret corpus and the NLI scorer lived in ``nous_assets`` and shipped to every
user although only the tests and benchmarks ran them.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests.support.imports import REPO, imports, module_name

PRODUCT = ("nous_assets", "resolver")
# Scripts run by path, not imported: the module -> the product file that names the path.
SCRIPTS = {"resolver.launch": "nous_assets/hooks.py"}  # the hook command `nous hooks install` writes


def _product_modules() -> dict[str, Path]:
    return {module_name(p): p for root in PRODUCT for p in sorted((REPO / root).rglob("*.py"))}


def _entry_point_text() -> str:
    texts = [(REPO / name).read_text(encoding="utf-8") for name in ("pyproject.toml", "workspace.yaml", "Makefile")]
    texts += [p.read_text(encoding="utf-8") for p in sorted((REPO / "deploy").rglob("*")) if p.is_file()]
    return "\n".join(texts)


def test_package_discovery_ships_only_the_product() -> None:
    found = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"]
    assert found["find"]["include"] == ["nous_assets*", "resolver*"]


def test_no_product_module_imports_the_tests() -> None:
    offenders = [
        f"{name} imports {imported}"
        for name, path in _product_modules().items()
        for imported in sorted(imports(path))
        if imported == "tests" or imported.startswith(("tests.", "benchmarks."))
    ]
    assert offenders == []


def test_every_shipped_module_has_a_product_caller() -> None:
    """A module nothing in the product imports (and no entry point names) is a test helper shipped by mistake."""
    modules = _product_modules()
    imported = {name for path in modules.values() for name in imports(path)}
    entry_points = _entry_point_text()
    orphans = [
        f"{name} ({path.relative_to(REPO)}): only tests or benchmarks use it; move it to tests/support/"
        for name, path in modules.items()
        if path.name not in ("__init__.py", "__main__.py")
        and name not in imported
        and name not in entry_points
        and not any(other.startswith(name + ".") for other in imported)
        and name not in SCRIPTS
    ]
    assert orphans == []


def test_the_scripts_run_by_path_are_named_by_the_product() -> None:
    for module, named_in in SCRIPTS.items():
        script = module.replace(".", "/") + ".py"
        assert (REPO / script).is_file(), script
        assert Path(script).name in (REPO / named_in).read_text(encoding="utf-8"), (script, named_in)


def test_the_dev_only_helpers_are_not_in_the_package() -> None:
    """The dev-only helpers themselves are what the check would have flagged had they stayed in the package."""
    helpers = sorted(p.stem for p in (REPO / "tests" / "support").glob("*.py"))
    assert {"embedded_pg", "secret_corpus", "nli_eval"} <= set(helpers)
    shipped = _product_modules()
    assert not [h for h in helpers if any(name.endswith("." + h) for name in shipped)]
