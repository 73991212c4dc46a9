"""One version source: pyproject.toml's [project] version, read back from the installed metadata."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

import veridic

REPO = Path(__file__).resolve().parents[1]


def test_version_is_the_installed_metadata_version():
    assert veridic.__version__ == version("veridic")


def test_version_is_pyproject_s():
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert veridic.__version__ == pyproject["project"]["version"], "reinstall veridic (pip install -e .) after changing the version"


def test_version_has_a_changelog_section():
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[{re.escape(veridic.__version__)}\]", changelog, flags=re.M), \
        f"CHANGELOG.md has no '## [{veridic.__version__}]' section"
    assert re.search(r"^## \[Unreleased\]", changelog, flags=re.M)


def test_cli_reports_the_version():
    from typer.testing import CliRunner

    from veridic.cli import app

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"veridic {veridic.__version__}"


def test_service_reports_the_version():
    pytest.importorskip("fastapi")
    from veridic.service._app import _version

    assert _version() == veridic.__version__
