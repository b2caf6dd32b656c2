"""Check a questions file against its transcripts: each question's cited ``line`` of ``file`` holds the evidence.

Usage: ``python benchmarks/questions/check_questions.py QUESTIONS.jsonl TRANSCRIPTS_DIR``

A question passes when the cited line (1-based), its JSON strings decoded and lowercased, contains every keyword
of one of its ``keys`` sets, and when each ``wrong`` set (a known wrong or stale answer) is found on some line of
a transcript of the same repository (the first folder of ``file``): a session did believe it. Prints one line
per failure and exits 1 if there is any.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def line_text(raw: str) -> str:
    """A transcript line as text: its decoded strings (and the raw line), lowercased."""
    try:
        decoded = "\n".join(_strings(json.loads(raw)))
    except ValueError:
        decoded = ""
    return (decoded + "\n" + raw).lower()


def holds(text: str, keysets: list[list[str]]) -> bool:
    return any(all(k.lower() in text for k in keys) for keys in keysets)


def check(questions: Path, transcripts: Path) -> list[str]:
    failures = []
    for number, raw in enumerate(questions.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        q = json.loads(raw)
        path = transcripts / q["file"]
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            failures.append(f"{questions}:{number}: cannot read {path}: {exc}")
            continue
        if not 1 <= q["line"] <= len(lines) or not holds(line_text(lines[q["line"] - 1]), q["keys"]):
            failures.append(f"{questions}:{number}: line {q['line']} of {q['file']} lacks keys {q['keys']}")
        repository = sorted((transcripts / Path(q["file"]).parts[0]).rglob("*.jsonl"))
        for wrong in q.get("wrong", []):
            if not any(holds(line_text(line), [wrong]) for f in repository for line in f.open(encoding="utf-8")):
                failures.append(f"{questions}:{number}: wrong answer {wrong} is in no transcript of its repository")
    return failures


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    found = check(Path(sys.argv[1]), Path(sys.argv[2]))
    print("\n".join(found) or f"{sys.argv[1]}: every cited line holds its evidence")
    sys.exit(1 if found else 0)
