"""Configuration (rules/configuration.py): the net change per file, renames followed, reverts dropped."""

from __future__ import annotations

from excerpts import EPISODIC_LARGE, EPISODIC_LONG, assistant, contents, edit, result, stream_of, whole

from nous_assets.extract.base import SessionBatch
from nous_assets.extract.rules import configuration


def test_real_rename_is_followed_and_deleted_file_dropped():
    # episodic-memory long-conversation L132-L156: docker/Dockerfile is written, then `mv … Containerfile`;
    # docker/docker-compose.yml is written, then `rm`'d
    found = configuration.configurations(stream_of(whole(EPISODIC_LONG)), set())
    names = {c.source_ref for c in found}
    assert "docker/Containerfile" in names
    assert "docker/Dockerfile" not in names and "docker/docker-compose.yml" not in names
    (containerfile,) = [c for c in found if c.source_ref == "docker/Containerfile"]
    assert containerfile.slot == "config:docker/Containerfile"
    assert "playwright:v1.56.0-arm64" in containerfile.content  # the final base image, not the first one
    assert "1.48.0-jammy" not in containerfile.content


def test_real_edits_called_wrong_leave_nothing():
    # episodic-memory large-conversation: a biome.json edit Claude calls wrong ("Wait, that's wrong") and a
    # package.json change that "broke npm ci"
    names = {c.source_ref for c in configuration.configurations(stream_of(whole(EPISODIC_LARGE)), set())}
    assert "biome.json" not in names and "package.json" not in names


def test_added_then_removed_line_is_no_change():
    p = "/home/dev/proj/pyproject.toml"
    turns = [
        assistant("Adding httpx.", edit(p, "e1", 'dev = ["pytest"]', 'dev = ["pytest", "httpx"]')),
        result("e1", "updated"),
        assistant("Adding ruff.", edit(p, "e2", 'dev = ["pytest", "httpx"]', 'dev = ["pytest", "ruff"]')),
        result("e2", "updated"),
    ]
    (c,) = configuration.configurations(stream_of(SessionBatch("p", "s", "d", turns)), set())
    assert "ruff" in c.content and "httpx" not in c.content
    revert = [
        assistant("Adding httpx.", edit(p, "e1", 'dev = ["pytest"]', 'dev = ["pytest", "httpx"]')),
        result("e1", "updated"),
        assistant("Removing it again.", edit(p, "e2", 'dev = ["pytest", "httpx"]', 'dev = ["pytest"]')),
        result("e2", "updated"),
    ]
    assert contents(configuration.configurations(stream_of(SessionBatch("p", "s", "d", revert)), set())) == []
