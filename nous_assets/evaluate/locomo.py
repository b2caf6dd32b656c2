"""LoCoMo as Claude Code transcripts, for the retrieval-quality benchmark.

Only the conversation turns, speakers, session dates and image captions are used — never the
dataset's generated ``observation``/``session_summary``/``event_summary``, nor anything from ``qa``
but the question (answers and evidence are only used to score). Each LoCoMo session becomes one
session transcript; each turn one user/assistant record whose uuid is derived from its ``dia_id``,
so retrieved memories and chunks map back to dialogue ids through their provenance.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

NAMESPACE = uuid.UUID("0e2f6a1c-6d1b-4f2a-9a5e-4c0f3b7d9e11")
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DIA = re.compile(r"D\d+:\d+")


def turn_uuid(sample_id: str, dia_id: str) -> str:
    return str(uuid.uuid5(NAMESPACE, f"{sample_id}:{dia_id}"))


def parse_locomo_date(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> datetime (UTC-naive)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")


def evidence_ids(raw: list[str]) -> set[str]:
    """Evidence lists hold 'D1:3' and occasionally 'D8:6; D9:17' in one string."""
    out: set[str] = set()
    for item in raw:
        out.update(_DIA.findall(item))
    return out


@dataclass
class Converted:
    project_id: str
    files: list[Path] = field(default_factory=list)
    uuid_to_dia: dict[str, str] = field(default_factory=dict)
    questions: list[dict[str, Any]] = field(default_factory=list)
    turns: int = 0


def _record(sample_id: str, session_uuid: str, turn: dict, speaker_a: str, when: datetime, parent: str | None) -> dict:
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shares an image: {turn['blip_caption']}]"
    is_user = turn["speaker"] == speaker_a
    uid = turn_uuid(sample_id, turn["dia_id"])
    common = {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": f"/locomo/{sample_id}",
        "sessionId": session_uuid,
        "version": "locomo",
        "gitBranch": "main",
        "uuid": uid,
        "timestamp": when.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
    }
    if is_user:
        return {**common, "type": "user", "message": {"role": "user", "content": text}}
    return {
        **common,
        "type": "assistant",
        "requestId": f"req_{uid[:8]}",
        "message": {
            "id": f"msg_{uid}",
            "role": "assistant",
            "model": "locomo",
            "content": [{"type": "text", "text": text}],
        },
    }


def convert_sample(sample: dict[str, Any], projects_dir: Path) -> Converted:
    """Write one LoCoMo conversation as ``projects_dir/locomo-<id>/<session>.jsonl`` files."""
    sample_id = str(sample["sample_id"])
    conv = sample["conversation"]
    out = Converted(project_id=f"locomo-{sample_id}")
    folder = projects_dir / out.project_id
    folder.mkdir(parents=True, exist_ok=True)
    speaker_a = conv["speaker_a"]
    sessions = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.match(k)) and conv[k])
    for n in sessions:
        start = parse_locomo_date(conv[f"session_{n}_date_time"])
        session_uuid = str(uuid.uuid5(NAMESPACE, f"{sample_id}:session_{n}"))
        lines, parent = [], None
        for i, turn in enumerate(conv[f"session_{n}"]):
            rec = _record(sample_id, session_uuid, turn, speaker_a, start + timedelta(seconds=30 * i), parent)
            parent = rec["uuid"]
            out.uuid_to_dia[rec["uuid"]] = turn["dia_id"]
            lines.append(json.dumps(rec))
        path = folder / f"{session_uuid}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        out.files.append(path)
        out.turns += len(lines)
    out.questions = [
        {"question": q["question"], "category": int(q["category"]), "evidence": sorted(evidence_ids(q["evidence"]))}
        for q in sample["qa"]
        if q.get("question")
    ]
    return out


def load_samples(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(s, dict) and "conversation" in s for s in data):
        raise ValueError(f"{path} is not a LoCoMo file (a list of samples with 'conversation')")
    return data
