"""The MQTT contract: topic tree, payload envelope, JSON Schemas (docs/mqtt/).

Pure: no I/O except reading the committed schema files. The topic tree and
payloads are documented in ``docs/mqtt/README.md`` and ``docs/mqtt/asyncapi.yaml``.

Every payload is one JSON object with the envelope fields ``schema``,
``version``, ``table``, ``boot``, ``seq`` (per boot and per topic, from 1),
``id`` (unique; an event keeps its id when resent), ``time`` (wall clock when
made) and ``replayed`` (this copy may be a duplicate), then its body.
"""
from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import re
import threading
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from firmware_host import events as ev

ROOT = "pokerhall/v1"
"""Root of the tree; the major version is part of it."""
SECURE_ROOT = f"{ROOT}/secure"
"""Root of the secure tree (hole and burn cards): the broker's ACL restricts it."""
CONTRACT_VERSION = 1
ID_RE = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
TXN_RE = re.compile(r"^[A-Za-z0-9-]{1,64}$")
CARD_RE = re.compile(r"\b[2-9TJQKA][cdhs]\b")
SCHEMA_DIR = next((p for p in (Path(__file__).resolve().parents[2] / "docs" / "mqtt" / "schemas",   # a checkout
                                Path(__file__).resolve().parents[1] / "data" / "schemas")       # the wheel's copy
                   if p.is_dir()), Path(__file__).resolve().parents[1] / "data" / "schemas")
COMMANDS = ("resolve", "set-level", "pause", "move-button", "void-hand")
MASK = "XX"
"""A card that is not public, as written on the public topics."""

PayloadKind = Literal["status", "birth", "state", "event", "secure-event", "irregularity", "health", "reply", "cmd"]
KINDS: tuple[PayloadKind, ...] = typing.get_args(PayloadKind)
"""Payload kinds: schema ``pokerhall.<kind>``, file ``docs/mqtt/schemas/<kind>.schema.json``."""

JsonObject = dict[str, Any]
"""A payload, a body or a JSON Schema: one JSON object."""


class ContractError(ValueError):
    """A payload or topic that breaks the contract."""


def check_id(value: object, what: str = "id") -> str:
    """Return *value* if it is a valid id ([a-z0-9-], 1..64, no leading/trailing dash)."""
    if not isinstance(value, str) or not ID_RE.match(value):
        raise ContractError(f"{what} {value!r} must be 1-64 characters of [a-z0-9-]")
    return value


@dataclass(frozen=True)
class Topics:
    """The topics of one table."""

    table: str

    def __post_init__(self) -> None:
        check_id(self.table, "table id")

    @property
    def base(self) -> str:
        return f"{ROOT}/table/{self.table}"

    @property
    def status(self) -> str:
        return f"{self.base}/status"

    @property
    def birth(self) -> str:
        return f"{self.base}/birth"

    @property
    def state(self) -> str:
        return f"{self.base}/state"

    @property
    def event(self) -> str:
        return f"{self.base}/event"

    @property
    def irregularity(self) -> str:
        return f"{self.base}/irregularity"

    @property
    def health(self) -> str:
        return f"{self.base}/health"

    @property
    def secure_event(self) -> str:
        return f"{SECURE_ROOT}/table/{self.table}/event"

    @property
    def cmd_filter(self) -> str:
        return f"{self.base}/cmd/+"

    def cmd(self, name: str) -> str:
        return f"{self.base}/cmd/{name}"

    def reply(self, name: str) -> str:
        return f"{self.base}/reply/{name}"

    def kind_of(self, topic: str) -> PayloadKind:
        """The payload kind published on *topic* (``reply`` for ``reply/<name>``)."""
        fixed: dict[str, PayloadKind] = {self.status: "status", self.birth: "birth", self.state: "state",
                                         self.event: "event", self.irregularity: "irregularity",
                                         self.health: "health", self.secure_event: "secure-event"}
        if topic in fixed:
            return fixed[topic]
        if topic.startswith(self.base + "/reply/"):
            return "reply"
        if topic.startswith(self.base + "/cmd/"):
            return "cmd"
        raise ContractError(f"{topic!r} is not a topic of table {self.table}")

    def is_public(self, topic: str) -> bool:
        return not topic.startswith(SECURE_ROOT + "/")


def envelope(kind: str, table: str, boot: str, seq: int, msg_id: str, now: float, **body: Any) -> JsonObject:
    """A payload: the envelope fields then *body*."""
    if kind not in KINDS:
        raise ContractError(f"unknown payload kind {kind!r}")
    payload: JsonObject = {"schema": f"pokerhall.{kind}", "version": CONTRACT_VERSION, "table": table, "boot": boot,
               "seq": seq, "id": msg_id, "time": round(now, 6), "replayed": False}
    payload.update(body)
    return payload


class StatusSeq:
    """The status topic's seq numbers, in the order a consumer can rely on (docs/mqtt/README.md, "Status
    order"): connection *k* of a boot numbers its statuses from ``k * BLOCK + 1`` and its Last Will, made
    before the connection, takes ``k * BLOCK + BLOCK - 1``: the Will outranks everything that connection
    said, and the next connection outranks the Will.

    >>> s = StatusSeq(); s.will(), s.next(), s.next(), s.will(), s.next()
    (1999999, 1000001, 1000002, 2999999, 2000001)
    """

    BLOCK = 1_000_000

    def __init__(self) -> None:
        self._block = 0
        self._n = 0
        self._lock = threading.Lock()

    def will(self) -> int:
        """Open the next connection's block; its Last Will's number."""
        with self._lock:
            self._block += 1
            self._n = 0
            return self._block * self.BLOCK + self.BLOCK - 1

    def next(self) -> int:
        """The next status of the present connection (a million status changes on one connection would
        repeat its last number rather than pass the Will)."""
        with self._lock:
            self._n = min(self._n + 1, self.BLOCK - 2)
            return self._block * self.BLOCK + self._n


def event_id(table: str, session: str, seq: int) -> str:
    """The id of engine event *seq*: the same on every resend and every topic."""
    return f"{table}-{session}-{seq}"


def dumps(payload: Mapping[str, Any]) -> str:
    """Canonical JSON (sorted keys, compact)."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


# -- command authentication ---------------------------------------------------

def sign(payload: Mapping[str, Any], key: bytes) -> str:
    """HMAC-SHA256 (hex) of the canonical JSON of *payload* without its ``hmac`` field."""
    body = {k: v for k, v in payload.items() if k != "hmac"}
    return hmac.new(key, dumps(body).encode(), hashlib.sha256).hexdigest()


def signed(payload: Mapping[str, Any], key: bytes) -> JsonObject:
    """*payload* with its ``hmac`` field."""
    return {**payload, "hmac": sign(payload, key)}


def verify(payload: Mapping[str, Any], key: bytes) -> bool:
    """Is the ``hmac`` field of *payload* right for *key*?"""
    mac = payload.get("hmac")
    return isinstance(mac, str) and hmac.compare_digest(mac, sign(payload, key))


# -- schemas ----------------------------------------------------------------------

_CARD = {"type": "string", "pattern": "^[2-9TJQKA][cdhs]$"}
_PUBLIC_CARD = {"type": "string", "pattern": "^([2-9TJQKA][cdhs]|XX)$"}
_SCALARS: dict[object, str] = {type(None): "null", bool: "boolean", int: "integer", float: "number", str: "string"}


def _json_type(hint: object, name: str, secure: bool) -> JsonObject:
    """The JSON Schema of field *name* of type *hint*: a card by its pattern, masked (``XX``) unless *secure*."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [_json_type(a, name, secure) for a in typing.get_args(hint)]
        return {"anyOf": options}
    if origin is tuple:
        item = typing.get_args(hint)[0]
        if item is str and name == "cards":
            return {"type": "array", "items": _CARD if secure else _PUBLIC_CARD}
        return {"type": "array", "items": _json_type(item, "", secure)}
    if hint is str and name == "card":
        return _CARD
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    raise ContractError(f"no JSON type for {hint!r}")


def event_body_schema(cls: type[ev.Event], *, secure: bool) -> JsonObject:
    """The JSON Schema of ``cls.to_dict()``, generated from the dataclass."""
    hints = typing.get_type_hints(cls)
    props: JsonObject = {"schema": {"const": ev.SCHEMA}, "version": {"const": ev.SCHEMA_VERSION},
                   "kind": {"const": cls.KIND}}
    required = ["schema", "version", "kind"]
    for f in dataclasses.fields(cls):
        props[f.name] = _json_type(hints[f.name], f.name, secure)
        if f.name not in cls.OPTIONAL:
            required.append(f.name)
    props["t"] = {"type": "number"}
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def event_schemas() -> JsonObject:
    """The generated schemas ``event.schema.json`` (public) and ``event-body-secure`` definitions."""
    public = {c.KIND: event_body_schema(c, secure=False) for c in ev.EVENT_TYPES.values() if not c.SECRET}
    secure = {c.KIND: event_body_schema(c, secure=True) for c in ev.EVENT_TYPES.values()}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://pokerhall.example/schemas/v1/event-bodies.schema.json",
        "title": "pokertable.event bodies (generated from firmware_host/events.py: "
                 "python -m firmware_host.mqtt.contract)",
        "$defs": {"public": {"oneOf": [{"$ref": f"#/$defs/public-{k}"} for k in public]},
                  "secure": {"oneOf": [{"$ref": f"#/$defs/secure-{k}"} for k in secure]},
                  **{f"public-{k}": v for k, v in public.items()},
                  **{f"secure-{k}": v for k, v in secure.items()}},
    }


def load_schemas(directory: Path = SCHEMA_DIR) -> dict[str, JsonObject]:
    """Every schema in *directory*, by file name."""
    return {p.name: json.loads(p.read_text()) for p in sorted(directory.glob("*.schema.json"))}


def inline_refs(node: Any, document: JsonObject, schemas: Mapping[str, JsonObject]) -> Any:
    """*node* (a part of schema *document*) with every ``{"$ref": ...}`` replaced by what it points to, in
    *document* (``#/...``) or in another of *schemas* (``file.schema.json#/...``). The contract's schemas have
    no recursive reference. ``$id``, ``$schema`` and ``$defs`` are dropped below the top: nothing refers to
    them any more.

    >>> doc = {"$defs": {"id": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/id"}}}
    >>> inline_refs(doc, doc, {})
    {'properties': {'a': {'type': 'string'}}}
    """
    if isinstance(node, list):
        return [inline_refs(v, document, schemas) for v in node]
    if not isinstance(node, dict):
        return node
    here = {k: inline_refs(v, document, schemas) for k, v in node.items() if k not in ("$id", "$schema", "$defs",
                                                                                          "$ref")}
    if "$ref" not in node:
        return here
    file, _, pointer = str(node["$ref"]).partition("#")
    target_doc = schemas[file] if file else document
    target: Any = target_doc
    for part in pointer.strip("/").split("/"):
        if part:
            target = target[part]
    resolved = inline_refs(target, target_doc, schemas)
    return {"allOf": [resolved, here]} if here else resolved     # a $ref beside other keywords: both apply


class Validator:
    """Validates payloads against the committed schemas in ``docs/mqtt/schemas``."""

    def __init__(self, directory: Path = SCHEMA_DIR) -> None:
        from jsonschema import Draft202012Validator
        from referencing import Registry, Resource

        schemas = load_schemas(directory)
        registry = Registry().with_resources(
            [(s["$id"], Resource.from_contents(s)) for s in schemas.values()]
            + [(name, Resource.from_contents(s)) for name, s in schemas.items()])
        self._validators = {name.removesuffix(".schema.json"): Draft202012Validator(s, registry=registry)
                            for name, s in schemas.items()}
        # The same check, faster: a payload's envelope without its event body, then the body against its own
        # kind's definition, each with every $ref written in place once here (no lookup per message). The
        # bodies' ``oneOf`` tries every kind (each has ``kind`` as a const, so at most one matches): about 50
        # times slower for the same verdict; the lookups, twice (tests/test_contract_validator.py).
        self._envelopes: dict[str, tuple[Any, str]] = {}
        self._bodies: dict[tuple[str, str], Any] = {}
        for name, schema in schemas.items():
            ref = schema.get("properties", {}).get("event", {}).get("$ref", "")
            if ref.startswith("event-bodies.schema.json#/$defs/"):
                bare = {**schema, "properties": {**schema["properties"], "event": {"type": "object"}}}
                self._envelopes[name.removesuffix(".schema.json")] = (
                    Draft202012Validator(inline_refs(bare, schema, schemas)), ref.rsplit("/", 1)[1])
        bodies_doc = schemas.get("event-bodies.schema.json", {})
        for name, body in bodies_doc.get("$defs", {}).items():
            tree, _, event_kind = name.partition("-")
            if event_kind:
                self._bodies[(tree, event_kind)] = Draft202012Validator(inline_refs(body, bodies_doc, schemas))

    def errors(self, payload: Mapping[str, Any]) -> list[str]:
        """Why *payload* breaks the contract (empty: it validates)."""
        kind = str(payload.get("schema", "")).removeprefix("pokerhall.")
        validator = self._validators.get(kind)
        if validator is None:
            return [f"no schema for {payload.get('schema')!r}"]
        event = payload.get("event")
        if kind in self._envelopes and isinstance(event, dict):
            envelope_check, tree = self._envelopes[kind]
            body_check = self._bodies.get((tree, str(event.get("kind"))))
            if body_check is not None:
                found = [(e.absolute_path, e.message) for e in envelope_check.iter_errors(payload)]
                found += [(["event", *e.absolute_path], e.message) for e in body_check.iter_errors(event)]
                return [f"{'/'.join(map(str, path)) or '(root)'}: {message}" for path, message in found]
        return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
                for e in validator.iter_errors(payload)]

    def check(self, payload: JsonObject) -> JsonObject:
        """Return *payload*, or raise :class:`ContractError` naming what is wrong."""
        errors = self.errors(payload)
        if errors:
            raise ContractError(f"{payload.get('schema')}: " + "; ".join(errors[:5]))
        return payload


def write_generated(directory: Path = SCHEMA_DIR) -> Path:
    """Regenerate ``event-bodies.schema.json`` from events.py."""
    path = directory / "event-bodies.schema.json"
    path.write_text(json.dumps(event_schemas(), indent=2, ensure_ascii=False) + "\n")
    return path


if __name__ == "__main__":
    print(write_generated())
