"""Pick the extraction provider named by ``settings.extractor`` (heuristic, claude or openai).

Providers are imported only when chosen, so the default heuristic path never pays for ``openai``.
"""

from __future__ import annotations

import inspect

from nous_assets.errors import ConfigError
from nous_assets.extract.base import Extractor
from nous_assets.settings import Settings

__all__ = ["EXTRACTORS", "get_extractor"]

EXTRACTORS = ("heuristic", "claude", "openai")


def get_extractor(settings: Settings) -> Extractor:
    name = settings.extractor
    if name == "heuristic":
        from nous_assets.extract.heuristic import HeuristicExtractor

        takes_settings = "settings" in inspect.signature(HeuristicExtractor).parameters
        return HeuristicExtractor(settings) if takes_settings else HeuristicExtractor()
    if name == "claude":
        from nous_assets.extract.claude_cli import ClaudeCliExtractor

        return ClaudeCliExtractor(settings)
    if name == "openai":
        from nous_assets.extract.openai_provider import OpenAIExtractor

        return OpenAIExtractor(settings)
    raise ConfigError(f"unknown extractor {name!r} (use one of: {', '.join(EXTRACTORS)})")
