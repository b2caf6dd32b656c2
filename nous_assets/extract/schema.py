"""One strict schema for every provider's output (pandera on a polars frame).

Nested values (concepts, edges, provenance) are carried as JSON text so the frame stays flat
and the checks stay explicit. :func:`validate_learnings` raises :class:`ExtractionSchemaError`
listing every problem; the queue records that text as the item's ``last_error``.
"""

from __future__ import annotations

import json
from typing import Any

import pandera.polars as pa
import polars as pl

from nous_assets.errors import NousError
from nous_assets.extract.base import KINDS
from nous_assets.status import STATUSES
from nous_assets.store.log.events import MAX_EVIDENCE, MEMORY_TYPES, REL_TYPES, SCOPES, TEMPORAL_CONFIDENCE
from nous_assets.timeutil import normalize_time

MIN_CONCEPTS, MAX_CONCEPTS = 3, 10
#: ``slot`` names the single-valued thing a learning sets (a later learning of the same slot supersedes it):
#: ``config:<file>[#<key>]``, ``gate:<repo>``, ``cmd:<purpose>[:…]``, ``tool:<purpose>``.
SLOT_PATTERN = r"^(?:config|gate|cmd|tool):\S.{0,158}$"
OPTIONAL_TEXT = ("weakens", "applies_when", "source_ref", "slot", "status")


class ExtractionSchemaError(NousError):
    """Provider output failed the extraction schema; nothing was written."""


def _concepts_ok(text: str) -> bool:
    try:
        concepts = json.loads(text)
    except (TypeError, ValueError):
        return False
    return (
        isinstance(concepts, list)
        and MIN_CONCEPTS <= len(concepts) <= MAX_CONCEPTS
        and all(isinstance(c, str) and c == " ".join(c.lower().split()) and 0 < len(c) <= 80 for c in concepts)
        and len(set(concepts)) == len(concepts)
    )


def _edges_ok(text: str) -> bool:
    try:
        edges = json.loads(text)
    except (TypeError, ValueError):
        return False
    if not isinstance(edges, list):
        return False
    for e in edges:
        if not isinstance(e, dict) or e.get("rel_type") not in REL_TYPES:
            return False
        target = e.get("target_index", e.get("target_id"))
        if isinstance(target, bool) or not isinstance(target, int) or target < 0:
            return False
        w = e.get("weight", 1.0)
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not 0 <= w <= 1:
            return False
    return True


def _evidence_ok(text: str) -> bool:
    try:
        evidence = json.loads(text)
    except (TypeError, ValueError):
        return False
    return isinstance(evidence, list) and len(evidence) <= MAX_EVIDENCE and all(isinstance(e, dict) for e in evidence)


def _provenance_ok(text: str) -> bool:
    try:
        prov = json.loads(text)
    except (TypeError, ValueError):
        return False
    return (
        isinstance(prov, dict)
        and isinstance(prov.get("session_id"), str)
        and isinstance(prov.get("uuids"), list)
        and len(prov["uuids"]) > 0
        and isinstance(prov.get("line_offsets"), list)
        and all(isinstance(o, int) and o >= 0 for o in prov["line_offsets"])
    )


def _time_ok(value: str | None) -> bool:
    if value is None:
        return True
    try:
        normalize_time(value)
    except ValueError:
        return False
    return True


class LearningSchema(pa.DataFrameModel):
    content: str = pa.Field(str_length={"min_value": 10, "max_value": 2000})
    type: str = pa.Field(isin=list(MEMORY_TYPES))
    kind: str = pa.Field(isin=list(KINDS))
    domain: str = pa.Field(str_length={"min_value": 1, "max_value": 64})
    scope: str = pa.Field(isin=list(SCOPES))
    concepts_json: str
    edges_json: str
    valid_from: str = pa.Field(nullable=True)
    valid_until: str = pa.Field(nullable=True)
    temporal_confidence: str = pa.Field(isin=list(TEMPORAL_CONFIDENCE))
    anchor_uuid: str = pa.Field(str_length={"min_value": 1})
    provenance_json: str
    weakens: str = pa.Field(nullable=True)
    applies_when: str = pa.Field(nullable=True, str_length={"max_value": 200})
    source_ref: str = pa.Field(nullable=True, str_length={"max_value": 200})
    slot: str = pa.Field(nullable=True, str_matches=SLOT_PATTERN)
    status: str = pa.Field(nullable=True, isin=list(STATUSES))
    evidence_json: str

    @pa.check("concepts_json", name="3..10 unique normalised concepts")
    def concepts_valid(cls, data) -> pl.LazyFrame:  # noqa: N805
        return data.lazyframe.select(pl.col(data.key).map_elements(_concepts_ok, return_dtype=pl.Boolean))

    @pa.check("edges_json", name="edges: target_index|target_id, rel_type, weight in [0,1]")
    def edges_valid(cls, data) -> pl.LazyFrame:  # noqa: N805
        return data.lazyframe.select(pl.col(data.key).map_elements(_edges_ok, return_dtype=pl.Boolean))

    @pa.check("evidence_json", name="evidence: a list of at most 16 objects")
    def evidence_valid(cls, data) -> pl.LazyFrame:  # noqa: N805
        return data.lazyframe.select(pl.col(data.key).map_elements(_evidence_ok, return_dtype=pl.Boolean))

    @pa.check("provenance_json", name="provenance: session_id, uuids, line_offsets")
    def provenance_valid(cls, data) -> pl.LazyFrame:  # noqa: N805
        return data.lazyframe.select(pl.col(data.key).map_elements(_provenance_ok, return_dtype=pl.Boolean))

    @pa.check("valid_from", "valid_until", name="ISO-8601 timestamp or null")
    def times_valid(cls, data) -> pl.LazyFrame:  # noqa: N805
        return data.lazyframe.select(
            pl.col(data.key).map_elements(_time_ok, return_dtype=pl.Boolean, skip_nulls=False)
        )

    class Config:
        strict = True
        coerce = False


_SCHEMA = {
    "content": pl.Utf8,
    "type": pl.Utf8,
    "kind": pl.Utf8,
    "domain": pl.Utf8,
    "scope": pl.Utf8,
    "concepts_json": pl.Utf8,
    "edges_json": pl.Utf8,
    "valid_from": pl.Utf8,
    "valid_until": pl.Utf8,
    "temporal_confidence": pl.Utf8,
    "anchor_uuid": pl.Utf8,
    "provenance_json": pl.Utf8,
    "weakens": pl.Utf8,
    "applies_when": pl.Utf8,
    "source_ref": pl.Utf8,
    "slot": pl.Utf8,
    "status": pl.Utf8,
    "evidence_json": pl.Utf8,
}


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _flatten(i: int, record: Any) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise ExtractionSchemaError(f"learning #{i} is not an object: {record!r:.80}")
    allowed = {"content", "type", "kind", "domain", "scope", "concepts", "edges", "valid_from", "valid_until",
               "temporal_confidence", "anchor_uuid", "provenance", "evidence", *OPTIONAL_TEXT}
    unknown = set(record) - allowed
    if unknown:
        raise ExtractionSchemaError(f"learning #{i} has unknown keys {sorted(unknown)}")
    missing = {"content", "type", "kind", "domain", "scope", "concepts", "temporal_confidence", "anchor_uuid",
               "provenance"} - set(record)
    if missing:
        raise ExtractionSchemaError(f"learning #{i} is missing keys {sorted(missing)}")
    row: dict[str, Any] = {}
    for key in ("content", "type", "kind", "domain", "scope", "temporal_confidence", "anchor_uuid"):
        value = record[key]
        if not isinstance(value, str):
            raise ExtractionSchemaError(f"learning #{i}: {key} must be a string, got {type(value).__name__}")
        row[key] = value
    for key in ("valid_from", "valid_until", *OPTIONAL_TEXT):
        value = record.get(key)
        if value is not None and not isinstance(value, str):
            raise ExtractionSchemaError(f"learning #{i}: {key} must be a string or null")
        row[key] = value
    row["concepts_json"] = _dump(record["concepts"])
    row["edges_json"] = _dump(record.get("edges", []))
    row["provenance_json"] = _dump(record["provenance"])
    row["evidence_json"] = _dump(record.get("evidence", []))
    return row


def learnings_frame(records: list[Any]) -> pl.DataFrame:
    return pl.DataFrame([_flatten(i, r) for i, r in enumerate(records)], schema=_SCHEMA)


def validate_learnings(records: list[Any]) -> pl.DataFrame:
    """Validate provider output; returns the flat frame or raises :class:`ExtractionSchemaError`."""
    if not isinstance(records, list):
        raise ExtractionSchemaError(f"extractor output must be a list of learnings, got {type(records).__name__}")
    frame = learnings_frame(records)
    if frame.is_empty():
        return frame
    try:
        return LearningSchema.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        cases = exc.failure_cases
        problems = []
        for row in cases.head(10).iter_rows(named=True):
            problems.append(f"{row.get('column')}: {row.get('check')} (value {str(row.get('failure_case'))[:60]!r})")
        raise ExtractionSchemaError("extraction failed schema: " + "; ".join(problems)) from None


def records_from_frame(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Back to provider-shaped dicts (after validation), nested values decoded."""
    out = []
    for row in frame.iter_rows(named=True):
        rec = {k: v for k, v in row.items() if not k.endswith("_json") and not (k in OPTIONAL_TEXT and v is None)}
        rec["concepts"] = json.loads(row["concepts_json"])
        rec["edges"] = json.loads(row["edges_json"])
        rec["provenance"] = json.loads(row["provenance_json"])
        rec["evidence"] = json.loads(row["evidence_json"])
        out.append(rec)
    return out
