"""The ingest floor: set by the first backfill, lowered only by a backfill that reaches it."""

from __future__ import annotations

from datetime import date

from nous_assets.store.ingest.floor import floor_or_default, get_floor, lower_floor


def test_first_backfill_sets_the_floor_and_only_contiguous_older_ranges_lower_it(conn):
    assert get_floor(conn) is None
    assert floor_or_default(conn, date(2026, 11, 24)) == "2026-08-26"  # the default 90-day window
    assert lower_floor(conn, "2026-08-26", "2026-11-24") == "2026-08-26"
    assert lower_floor(conn, "2026-09-01", "2026-11-24") == "2026-08-26"  # a shorter window keeps it
    assert lower_floor(conn, "2025-03-01", "2025-03-10") == "2026-08-26"  # an isolated old range does not
    assert lower_floor(conn, "2026-03-01", "2026-08-25") == "2026-03-01"  # a range reaching the floor does
    assert lower_floor(conn, "2025-01-01") == "2025-01-01"  # open-ended (--since): always reaches
    assert get_floor(conn) == "2025-01-01" == floor_or_default(conn, date(2026, 11, 24))
