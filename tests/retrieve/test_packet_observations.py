"""A packet shows an observation in place of its members only when two or more of them earned lines and it is
shorter than they are together (issue 24)."""

from __future__ import annotations

import json

from nous_assets.retrieve.observations import fold, members_of
from nous_assets.retrieve.search import Result

HOOK_1 = '`git add lib/x.ex` failed with "pre-commit validation failed (FORMAT)"; fixed by running `mix format`'
HOOK_2 = '`git commit -m "wip"` failed with "pre-commit validation failed (FORMAT)"; fixed by running `mix format`'
PORT = "The dev server listens on port 4000 when started with mix phx.server."


def _memory(mid: int, lid: str, content: str, score: float, kind: str = "gotcha", **kw) -> Result:
    return Result(id=mid, learning_id=lid, content=content, kind=kind, score=score, **kw)


def _observation(members: list[str], content: str = HOOK_1) -> Result:
    provenance = json.dumps({"members": members, "anchor": members[0], "carried": members})
    return _memory(9, "obs", content, 0.1, kind="observation", type="knowledge", provenance_json=provenance)


def test_an_observation_takes_the_place_of_its_best_ranked_member_in_that_members_section():
    port, hook1, hook2 = _memory(1, "port", PORT, 0.9), _memory(2, "h1", HOOK_1, 0.8), _memory(3, "h2", HOOK_2, 0.5)
    folded = fold([port, hook1, hook2], [_observation(["h1", "h2"])])
    assert [r.learning_id for r in folded] == ["port", "obs"]
    assert folded[1].kind == "gotcha" and folded[1].score == 0.8 and folded[1].id == 9  # feedback names it
    assert members_of(folded[1]) == {"h1", "h2"}


def test_an_observation_stays_out_when_fewer_than_two_members_earned_lines_or_it_is_not_shorter():
    port, hook1 = _memory(1, "port", PORT, 0.9), _memory(2, "h1", HOOK_1, 0.8)
    assert fold([port, hook1], [_observation(["h1", "h2"])]) == [port, hook1]  # one member: it would add a line
    hook2 = _memory(3, "h2", HOOK_2, 0.5)
    longer = _observation(["h1", "h2"], HOOK_1 + " " + HOOK_2 + " And more.")
    assert fold([port, hook1, hook2], [longer]) == [port, hook1, hook2]
    assert fold([port, _observation(["h1", "h2"])], []) == [port]  # never on its own
    partial = _observation(["h1", "h2"])
    partial.provenance_json = json.dumps({"members": ["h1", "h2"], "carried": ["h1"]})  # h2 says more than it
    assert fold([port, hook1, hook2], [partial]) == [port, hook1, hook2]
