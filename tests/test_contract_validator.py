"""The contract's fast validator (every $ref written in place, each event body against its own kind) gives the
same verdict as the plain JSON Schema validation of the committed schemas, on the demo's real payloads and on
payloads broken in the ways a faulty or hostile publisher would break them."""
from __future__ import annotations

import copy

from firmware_host.mqtt import contract as mc
from firmware_host.mqtt.public_view import PublicView
from firmware_host.rules.engine import HandEngine
from firmware_host.rules.profile import builtin_profile
from firmware_host.sim.demo import script


def _payloads():
    engine, view = HandEngine(builtin_profile("000"), "t1"), PublicView()
    out = []
    for o in script():
        for e in engine.feed(o):
            body = e.to_dict()
            out.append(mc.envelope("secure-event", "t1", "b1", len(out) + 1, mc.event_id("t1", "s1", e.seq), 1.0,
                                   event=body))
            public = view.apply(e)
            if public is not None:
                out.append(mc.envelope("event", "t1", "b1", len(out) + 1, mc.event_id("t1", "s1", e.seq), 1.0,
                                       event=public))
                if body["kind"] == "irregularity":
                    out.append(mc.envelope("irregularity", "t1", "b1", len(out) + 1, mc.event_id("t1", "s1", e.seq),
                                           1.0, source="engine", event=public))
    return out


def _broken(payload):
    """The ways a payload can break the contract: each a new payload."""
    def edit(change):
        p = copy.deepcopy(payload)
        change(p)
        return p
    event = payload["event"]
    first = next(k for k in event if k not in ("schema", "version", "kind"))
    yield edit(lambda p: p.pop("boot"))
    yield edit(lambda p: p.update(seq="7"))
    yield edit(lambda p: p.update(extra=1))
    yield edit(lambda p: p.update(table="T 1"))
    yield edit(lambda p: p["event"].update(kind="no-such-kind"))
    yield edit(lambda p: p["event"].pop(first))
    yield edit(lambda p: p["event"].update({first: {"not": "this"}}))
    yield edit(lambda p: p["event"].update(unknown_field=True))
    if "cards" in event:
        yield edit(lambda p: p["event"].update(cards=["1x"]))
    if "card" in event:
        yield edit(lambda p: p["event"].update(card="Zz"))


def test_the_fast_check_agrees_with_plain_schema_validation():
    fast = mc.Validator()
    payloads = _payloads()
    cases = payloads + [b for p in payloads for b in _broken(p)]
    assert len(cases) > 900
    for case in cases:
        kind = case["schema"].removeprefix("pokerhall.")
        plain = fast._validators[kind].is_valid(case)      # the registry's, $refs looked up as the schema says
        assert (fast.errors(case) == []) == plain, case
    assert all(fast.errors(p) == [] for p in payloads)
    assert sum(bool(fast.errors(c)) for c in cases) == len(cases) - len(payloads)
