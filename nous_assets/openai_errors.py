"""What a failed call to an OpenAI-compatible endpoint means, written once for every caller.

The extractor, the embedder (and any later classifier) each raise their own error types, but they agree on
the message a user reads and on which failures are worth retrying: a timeout, a lost connection, a rate
limit, a server error or a missing key may pass; any other HTTP 4xx means the request itself is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass

AUTH_HINT = "check NOUS_OPENAI_API_KEY / OPENAI_API_KEY"


@dataclass(frozen=True)
class OpenAIFailure:
    message: str
    status: int | None = None  # the HTTP status, when the endpoint answered

    @property
    def permanent(self) -> bool:
        """A 4xx other than auth and rate limits: retrying the same request cannot help."""
        return self.status is not None and 400 <= self.status < 500 and self.status not in (401, 403, 429)


def short(value: object, n: int = 200) -> str:
    """One line of at most ``n`` characters, for error messages."""
    text = " ".join(str(value).split())
    return text[:n] + ("…" if len(text) > n else "")


def describe(exc: BaseException, where: str, timeout: float) -> OpenAIFailure | None:
    """The failure ``exc`` stands for when calling ``where``; None when it is not an endpoint failure."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        hint = f" ({AUTH_HINT})" if status in (401, 403) else ""
        return OpenAIFailure(f"{where} returned HTTP {status}: {short(exc)}{hint}", status)
    if isinstance(exc, openai.APITimeoutError):
        return OpenAIFailure(f"{where} timed out after {timeout:g}s")
    if isinstance(exc, openai.APIConnectionError):
        return OpenAIFailure(f"cannot reach {where}: {short(exc)}")
    if isinstance(exc, openai.OpenAIError):
        return OpenAIFailure(f"{where} request failed: {short(exc)}")
    if isinstance(exc, ValueError):  # a 200 whose body is not JSON (proxy page, wrong base URL)
        return OpenAIFailure(f"{where} sent an unreadable response: {short(exc)}")
    return None
