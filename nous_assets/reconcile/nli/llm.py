"""The ``llm`` classifier: an OpenAI-compatible endpoint or ``claude --print`` labels each pair.

One request per batch of pairs, asking for a JSON array of ``{"label", "confidence", "single_valued"}``;
a reply that is not that is a :class:`ClassifierUnavailable` (the run fails with the reason and retries
next time: nothing is cached or appended for the batch). Errors of the endpoint are described by the shared
:mod:`nous_assets.openai_errors` mapping.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Sequence
from typing import Any

from nous_assets.openai_errors import describe, short
from nous_assets.reconcile.nli.base import LABELS, ClassifierUnavailable, Verdict
from nous_assets.settings import Settings

PROMPT = """You compare short notes an assistant kept about a software project. For each numbered pair,
say whether note B contradicts note A (they cannot both be true now), entails it (says the same thing), or
is neutral (unrelated, or both can hold). Set "single_valued" to true when both state a value of one
single-valued thing (a port, a version, a path, the command or tool used for one job), so only one can be
current. Answer with JSON only: {"results": [{"label": "contradiction|entailment|neutral",
"confidence": 0.0-1.0, "single_valued": true|false}, ...]} with one entry per pair, in order.
"""
_JSON = re.compile(r"\{.*\}", re.S)


def build_prompt(pairs: Sequence[tuple[str, str]]) -> str:
    lines = [f"{i}. A: {json.dumps(a)}\n   B: {json.dumps(b)}" for i, (a, b) in enumerate(pairs, 1)]
    return PROMPT + "\n" + "\n".join(lines)


def parse_reply(text: str, expected: int, model: str) -> list[Verdict]:
    """The verdicts in a model's reply; anything else raises :class:`ClassifierUnavailable`."""
    found = _JSON.search(text or "")
    try:
        results = json.loads(found.group(0))["results"] if found else None
    except (ValueError, KeyError, TypeError):
        results = None
    if not isinstance(results, list) or len(results) != expected:
        raise ClassifierUnavailable(f"nli llm reply is not {expected} results as JSON: {short(text)}")
    out = []
    for item in results:
        try:
            label, conf = str(item["label"]).lower(), float(item["confidence"])
            if label not in LABELS or not 0 <= conf <= 1:
                raise ValueError(label)
            out.append(Verdict(label, conf, bool(item.get("single_valued", False)), reason=model))
        except (KeyError, TypeError, ValueError):
            raise ClassifierUnavailable(f"nli llm result is malformed: {short(item)}") from None
    return out


class OpenAIClassifier:
    """``chat.completions.create`` against the configured OpenAI-compatible endpoint."""

    name = "llm"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.model_version = f"llm-openai-{settings.openai_model}-1"
        self._client: Any = None

    def _client_or_fail(self) -> Any:
        if self._client is None:
            if not (self.settings.openai_api_key or self.settings.openai_base_url):
                raise ClassifierUnavailable(
                    "nli llm classifier needs NOUS_OPENAI_API_KEY or NOUS_OPENAI_BASE_URL (or nli.llm_provider: claude)"
                )
            import openai

            self._client = openai.OpenAI(
                base_url=self.settings.openai_base_url,
                api_key=self.settings.openai_api_key or "not-needed",
                timeout=self.settings.llm_timeout_seconds,
                max_retries=0,
            )
        return self._client

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        if not pairs:
            return []
        client = self._client_or_fail()
        try:
            reply = client.chat.completions.create(
                model=self.settings.openai_model,
                messages=[{"role": "user", "content": build_prompt(pairs)}],
                response_format={"type": "json_object"},
                temperature=0,
            )
            text = reply.choices[0].message.content or ""
        except Exception as exc:  # noqa: BLE001 - mapped below; anything unmapped is re-raised
            failure = describe(exc, "the NLI endpoint", self.settings.llm_timeout_seconds)
            if failure is None:
                raise
            raise ClassifierUnavailable(failure.message) from None
        return parse_reply(text, len(pairs), self.model_version)


class ClaudeCliClassifier:
    """``claude --print`` with the prompt on stdin (the user's own Claude Code login)."""

    name = "llm"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.model_version = f"llm-claude-{settings.claude_model}-1"

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        if not pairs:
            return []
        argv = [self.settings.claude_bin, "--print", "--model", self.settings.claude_model, "--output-format", "text"]
        env = {k: v for k, v in __import__("os").environ.items() if k != "CLAUDECODE"}
        try:
            proc = subprocess.run(
                argv, input=build_prompt(pairs), capture_output=True, text=True, encoding="utf-8", errors="replace",
                timeout=self.settings.llm_timeout_seconds, env=env, check=False,
            )  # fmt: skip
        except FileNotFoundError:
            raise ClassifierUnavailable(f"claude CLI not found: {argv[0]!r} (set NOUS_CLAUDE_BIN)") from None
        except subprocess.TimeoutExpired:
            raise ClassifierUnavailable(f"claude CLI timed out after {self.settings.llm_timeout_seconds:g}s") from None
        if proc.returncode != 0:
            raise ClassifierUnavailable(f"claude CLI exited with {proc.returncode}: {short(proc.stderr)}")
        return parse_reply(proc.stdout, len(pairs), self.model_version)
