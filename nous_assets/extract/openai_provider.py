"""Extraction through any OpenAI-compatible chat completions endpoint (OpenAI, Ollama, vLLM, LM Studio...).

Base URL, key and model come from :class:`~nous_assets.settings.Settings`. A local server usually needs no
key, so the placeholder ``"not-needed"`` is sent when a base URL is set but no key is; without either the
provider is unavailable rather than silently talking to api.openai.com unauthenticated. The client never
retries on its own (``max_retries=0``): retries belong to the extraction queue, which backs off.

``openai`` is imported lazily: it is slow to import and only this provider needs it.
"""

from __future__ import annotations

from typing import Any

from nous_assets.extract.base import SessionBatch
from nous_assets.extract.errors import ExtractionSchemaError, ExtractorUnavailable
from nous_assets.extract.prompt import MAX_CHARS, parse_llm_output, prepare_prompt
from nous_assets.openai_errors import describe, short
from nous_assets.settings import Settings

__all__ = ["PLACEHOLDER_KEY", "OpenAIExtractor"]

PLACEHOLDER_KEY = "not-needed"


class OpenAIExtractor:
    """``chat.completions.create`` with a system + user message and ``response_format=json_object``."""

    name = "openai"

    def __init__(self, settings: Settings, *, max_chars: int = MAX_CHARS) -> None:
        self.settings = settings
        self.model = settings.openai_model
        self.version = f"openai-{self.model}-2"  # -2: the issue-8 prompt (kinds, slots, skip rules)
        self.max_chars = max_chars
        self._client: Any = None

    def _api_key(self) -> str:
        if self.settings.openai_api_key:
            return self.settings.openai_api_key
        if self.settings.openai_base_url:
            return PLACEHOLDER_KEY
        raise ExtractorUnavailable(
            "openai extractor needs an API key: set NOUS_OPENAI_API_KEY or OPENAI_API_KEY "
            "(or NOUS_OPENAI_BASE_URL for a local OpenAI-compatible server)"
        )

    def client(self) -> Any:
        if self._client is None:
            import openai

            try:
                self._client = openai.OpenAI(
                    base_url=self.settings.openai_base_url,
                    api_key=self._api_key(),
                    timeout=self.settings.llm_timeout_seconds,
                    max_retries=0,
                )
            except openai.OpenAIError as exc:
                raise ExtractorUnavailable(f"cannot create OpenAI client: {exc}") from None
        return self._client

    def complete(self, system: str, user: str) -> str:
        """One chat completion; returns the message text."""
        client = self.client()
        try:
            completion = client.chat.completions.create(
                model=self.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                response_format={"type": "json_object"},
                temperature=0,
            )
        except Exception as exc:
            failure = describe(exc, "OpenAI endpoint", self.settings.llm_timeout_seconds)
            if failure is None:
                raise
            raise ExtractorUnavailable(failure.message) from None
        choices = getattr(completion, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise ExtractorUnavailable(
                f"OpenAI endpoint did not return a chat completion (check the base URL): {short(completion)}"
            )
        choice = choices[0]
        message = getattr(choice, "message", None)
        content = getattr(message, "content", None)
        finish_reason = getattr(choice, "finish_reason", None)
        if finish_reason == "length":
            raise ExtractionSchemaError("OpenAI reply was cut off at the token limit (finish_reason=length)")
        if not isinstance(content, str) or not content.strip():
            refusal = getattr(message, "refusal", None)
            detail = f" (refusal: {refusal!r:.120})" if refusal else ""
            raise ExtractionSchemaError(f"OpenAI reply has no text content{detail}")
        return content

    def extract(self, batch: SessionBatch) -> list[dict[str, Any]]:
        prompt = prepare_prompt(batch, self.max_chars)
        if not prompt.refs:
            return []  # nothing a person said or did: no need to ask the model
        return parse_llm_output(self.complete(prompt.system, prompt.user), batch, refs=prompt.refs)
