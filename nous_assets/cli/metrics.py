"""``nous metrics``: process-mining figures over the event log and access history."""

from __future__ import annotations

from nous_assets.cli.common import AddCommand


def register(add: AddCommand) -> None:
    return None
