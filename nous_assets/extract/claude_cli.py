"""Extraction through the local Claude Code CLI (``claude --print``), using the user's own login.

The prompt goes to the CLI on stdin (never as an argument: no length limit, nothing in ``ps``); the
reply on stdout is parsed and validated by :func:`nous_assets.extract.prompt.parse_llm_output`.

The child inherits the environment except ``CLAUDECODE``: Claude Code sets it for its hooks and tools,
and the CLI refuses to start a nested session while it is set, which would make every extraction started
from a hook fail. The child runs in its own process group so a timeout kills everything it started (a
plain ``subprocess.run`` timeout would wait forever on a grandchild still holding the pipes).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from typing import Any

from nous_assets.extract.base import SessionBatch
from nous_assets.extract.errors import ExtractionSchemaError, ExtractorUnavailable
from nous_assets.extract.prompt import MAX_CHARS, parse_llm_output, prepare_prompt
from nous_assets.settings import Settings

__all__ = ["ClaudeCliExtractor"]

_NESTED_SESSION_VARS = ("CLAUDECODE",)
_STDERR_CHARS = 300


def _tail(text: str | bytes | None) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    text = " ".join((text or "").split())
    return text[-_STDERR_CHARS:]


class ClaudeCliExtractor:
    """``claude --print --model MODEL --output-format text`` with the prompt on stdin."""

    name = "claude"

    def __init__(self, settings: Settings, *, max_chars: int = MAX_CHARS) -> None:
        self.settings = settings
        self.model = settings.claude_model
        self.version = f"claude-{self.model}-2"  # -2: the issue-8 prompt (kinds, slots, skip rules)
        self.max_chars = max_chars

    def command(self) -> list[str]:
        return [self.settings.claude_bin, "--print", "--model", self.model, "--output-format", "text"]

    def _env(self) -> dict[str, str]:
        return {k: v for k, v in os.environ.items() if k not in _NESTED_SESSION_VARS}

    def _run(self, prompt: str) -> str:
        argv = self.command()
        timeout = self.settings.llm_timeout_seconds
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self._env(),
                text=True,
                encoding="utf-8",
                errors="replace",
                start_new_session=True,
            )
        except FileNotFoundError:
            raise ExtractorUnavailable(
                f"claude CLI not found: {argv[0]!r} (install Claude Code or set NOUS_CLAUDE_BIN)"
            ) from None
        except OSError as exc:
            raise ExtractorUnavailable(f"cannot run claude CLI {argv[0]!r}: {exc.strerror or exc}") from None
        try:
            stdout, stderr = proc.communicate(prompt, timeout=timeout)
        except subprocess.TimeoutExpired:
            self._kill(proc)
            raise ExtractorUnavailable(f"claude CLI timed out after {timeout:g}s") from None
        except BaseException:
            self._kill(proc)
            raise
        if proc.returncode != 0:
            detail = _tail(stderr) or _tail(stdout) or "no output"
            raise ExtractorUnavailable(f"claude CLI exited with status {proc.returncode}: {detail}")
        if not stdout.strip():
            raise ExtractionSchemaError(f"claude CLI printed nothing (stderr: {_tail(stderr) or 'empty'})")
        return stdout

    @staticmethod
    def _kill(proc: subprocess.Popen[str]) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if hasattr(os, "killpg"):
                os.killpg(proc.pid, signal.SIGKILL)
            else:  # pragma: no cover - Windows
                proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired, ValueError, OSError):
            proc.communicate(timeout=5)

    def extract(self, batch: SessionBatch) -> list[dict[str, Any]]:
        prompt = prepare_prompt(batch, self.max_chars)
        if not prompt.refs:
            return []  # nothing a person said or did: no need to ask the model
        return parse_llm_output(self._run(prompt.text), batch, refs=prompt.refs)
