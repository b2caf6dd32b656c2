"""What the project is, in its own words (brief/about.py, the description facts of brief/manifests.py)."""

from __future__ import annotations

from brief_turns import Sess, real

from nous_assets.brief.about import describe, first_paragraph
from nous_assets.brief.layout import mine_layout
from nous_assets.brief.manifests import description_text, read_manifests
from nous_assets.brief.timeline import build_timeline

README = """# Tool

[![CI](https://example.org/badge.svg)](https://example.org/ci)

> [!NOTE]
> a quote about the name

`tool` turns notes into tasks (Markdown in, tasks out): it reads folders. It is fast.

## Install
"""


def _about(*batches) -> str:
    views = build_timeline(list(batches))
    return describe(views, read_manifests(views), set())[0]


def test_real_projects_say_what_they_are():
    assert _about(*real("transcripts-dev3", "duet")) == (
        "About: Claude Code plugin for reflection, code quality, writing, and design (`.claude-plugin/plugin.json`).")
    # wakil's README, read from its top with a limit of 25 lines: badges and a quoted definition come first
    assert _about(*real("transcripts-dev3", "wakil")) == (
        "About: wakil is a local-first Python CLI agent for working with a personal Markdown knowledge base "
        "(`README.md`).")  # fmt: skip
    # ironclaw's only description is its Rust orchestrator's, said for that folder
    assert _about(*real("transcripts-dev3", "ironclaw")).startswith(
        "About `orchestrator/`: Local-first Agentic AI Runtime - Rust Orchestrator (`orchestrator/Cargo.toml`).")
    assert _about(*real("transcripts", "spotter")) == ""  # its README says "**TODO: Add description**"


def test_the_layout_paragraph_starts_with_it():
    views = build_timeline(list(real("transcripts-dev3", "duet")))
    item = mine_layout(views, read_manifests(views))[0]
    assert item.content.startswith("About: Claude Code plugin for") and "Layout: `notes/`" in item.content
    assert any(e["what"] == "read `.claude-plugin/plugin.json`" for e in item.evidence) or len(item.evidence) == 6


def test_a_readme_paragraph_needs_the_top_of_the_file_and_its_end():
    s = Sess()
    s.read("README.md", README)
    said = "About: tool turns notes into tasks (Markdown in, tasks out): it reads folders (`README.md`)."
    assert _about(s.batch()) == said
    late = Sess()
    late.read("README.md", README, offset=40)
    assert _about(late.batch()) == ""  # a read from line 40 does not show the first paragraph
    cut = Sess()
    cut.read("README.md", README.split("It is fast.")[0].rstrip(), limit=8)
    assert _about(cut.batch()) == ""  # the read stopped inside the paragraph
    whole = Sess()
    whole.write("README.md", README.split("It is fast.")[0].rstrip())
    assert _about(whole.batch()).startswith("About: tool turns")  # the whole file ends there
    sub = Sess()
    sub.read("docs/README.md", README)
    assert _about(sub.batch()) == ""  # a folder's README is not the project's


def test_a_root_manifest_wins_and_a_removed_one_no_longer_speaks():
    s = Sess()
    s.read("README.md", README)
    s.read("package.json", '{"name": "tool", "description": "Turns notes into tasks"}')
    assert _about(s.batch()) == "About: Turns notes into tasks (`package.json`)."
    views = build_timeline([s.batch()])
    assert describe(views, read_manifests(views), {"package.json"})[0].endswith("it reads folders (`README.md`).")


def test_placeholders_and_long_descriptions():
    for placeholder in ("Add your description here", "A new Flutter project.", "**TODO: Add description**", ""):
        assert description_text(placeholder) == ""
    long = "A service that " + "does many things and " * 12 + "more."
    assert description_text(long) == ""  # no sentence, colon, parenthesis or comma to cut it at
    assert description_text("Fast notes: " + long) == "Fast notes"
    assert description_text("Groups changes into sets, " + long) == "Groups changes into sets"
    assert first_paragraph("# T\n\n- a list\n- first\n\nProse here.\n") == "Prose here."
    assert first_paragraph("- status: On branch main\nYour branch is ahead.\n\nProse here.\n") == "Prose here."
    assert first_paragraph("# T\n\n```sh\nrun it\n```\n\nProse here.\n\n") == "Prose here."
