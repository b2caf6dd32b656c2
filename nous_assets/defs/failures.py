"""Why a Dagster run failed, as one line a person can act on.

A failed step's event says only ``Execution of step "transcripts" failed.``; the reason is the
innermost error in its (serialised) cause chain. Our own errors already read as one actionable
line; anything else keeps its class name so it can still be searched for.
"""

from __future__ import annotations

import dagster as dg

from nous_assets.errors import NousError


def _our_error_names() -> set[str]:
    names, todo = set(), [NousError]
    while todo:
        cls = todo.pop()
        names.add(cls.__name__)
        todo.extend(cls.__subclasses__())
    return names


def _one_line(error) -> str:
    """Our error nearest the top of the cause chain (it explains the rest), else the innermost one."""
    ours = _our_error_names()
    while error.cause is not None and error.cls_name not in ours:
        error = error.cause
    text = (error.message or "").strip()
    head = text.split(": ", 1)
    if len(head) == 2 and head[0].rsplit(".", 1)[-1] in ours:
        text = head[1]
    return text.splitlines()[0] if text else error.cls_name or "error"


def failure_reason(result: dg.ExecuteInProcessResult) -> str:
    """The first failed step's underlying error, or the run's own failure message."""
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data and event.step_failure_data.error:
            return f"{event.step_key}: {_one_line(event.step_failure_data.error)}"
    failures = [e for e in result.all_events if e.is_failure]
    return str(failures[0].message) if failures else "run failed"
