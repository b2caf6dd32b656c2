"""Tier 3 of re-learning detection: an LLM asked whether two learnings are one, for ambiguous pairs only.

Optional (``relearn_judge``: ``off`` by default, or ``openai`` for any OpenAI-compatible endpoint, with the
extractor's base URL, key and model). About a hundred tokens per pair, asked only when tiers 1 and 2 leave a
pair between the near-miss and the match thresholds. The judge fails open: an endpoint that cannot be reached
or answers nonsense counts as "cannot tell" (the learning is kept apart and its near-miss recorded, as without
a judge), and after a failure the judge stops asking for the rest of its run, with the reason in ``failure``.
The caller hands it texts already redacted.
"""

from __future__ import annotations

import json
from typing import Any

from nous_assets.openai_errors import describe, short
from nous_assets.settings import Settings

PLACEHOLDER_KEY = "not-needed"
SYSTEM = (
    "You compare two notes a coding assistant kept about one software project. Answer with a JSON object "
    '{"same": true} when both state the same learning (one fact, rule, preference or fix, however worded), '
    '{"same": false} when they state different things or different values. Nothing else.'
)


class OpenAIJudge:
    """``judge(incoming, held) -> True | False | None`` through ``chat.completions`` (JSON object reply)."""

    def __init__(self, settings: Settings, *, max_calls: int = 200) -> None:
        self.settings = settings
        self.max_calls = max_calls
        self.calls = 0
        self.failure: str | None = None
        self._client: Any = None

    def _client_or_none(self) -> Any:
        if self._client is None:
            import openai

            key = self.settings.openai_api_key or (PLACEHOLDER_KEY if self.settings.openai_base_url else None)
            if key is None:
                self.failure = "relearn_judge openai needs NOUS_OPENAI_API_KEY or NOUS_OPENAI_BASE_URL"
                return None
            self._client = openai.OpenAI(base_url=self.settings.openai_base_url, api_key=key,
                                         timeout=self.settings.llm_timeout_seconds, max_retries=0)  # fmt: skip
        return self._client

    def __call__(self, incoming: str, held: str) -> bool | None:
        if self.failure is not None or self.calls >= self.max_calls:
            return None
        client = self._client_or_none()
        if client is None:
            return None
        self.calls += 1
        user = json.dumps({"note_a": incoming, "note_b": held}, ensure_ascii=False)
        try:
            completion = client.chat.completions.create(
                model=self.settings.openai_model,
                messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
                response_format={"type": "json_object"},
                temperature=0,
                max_tokens=20,
            )
            answer = json.loads(completion.choices[0].message.content or "")
        except Exception as exc:  # fail open: the judge is optional, the extraction goes on without it
            failure = describe(exc, "re-learning judge endpoint", self.settings.llm_timeout_seconds)
            self.failure = failure.message if failure else f"re-learning judge sent an unusable reply: {short(exc)}"
            return None
        same = answer.get("same") if isinstance(answer, dict) else None
        return same if isinstance(same, bool) else None


def relearn_judge(settings: Settings) -> OpenAIJudge | None:
    """The configured tier-3 judge, or None when it is off."""
    return OpenAIJudge(settings) if settings.relearn_judge == "openai" else None
