"""The TD's dashboard over HTTP (aiohttp): pages, JSON, server-sent events, commands (docs/dashboard.md).

The shell around the pure parts: :class:`~hall.dashboard.room.Room` (what each role may see),
:class:`~hall.dashboard.h4h.HandForHand`, :class:`~hall.dashboard.accounts.Accounts`. Broker messages
arrive on paho's thread and are handed to the event loop; the store (finished hands, PHH) is read on one
worker thread of its own. Every answer is filtered by the session's role before it leaves: a role never
receives data it may not see, in a page, a JSON answer or the event stream.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import html
import json
import logging
import re
import secrets
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from hall.config import DashboardConfig
from hall.dashboard.accounts import Accounts, Session, load_users, same
from hall.dashboard.h4h import REASON, HandForHand, Order
from hall.dashboard.link import COMMANDS, Link
from hall.dashboard.room import Room, Update, replay
from hall.store import open_store

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
COOKIE, LOGIN_COOKIE = "hall_session", "hall_login"
HEADERS = {"Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; "
                                      "form-action 'self'; base-uri 'none'",
           "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
           "Cache-Control": "no-store"}
KEEPALIVE = 15.0
PAGE_COMMANDS = (*COMMANDS, "resume")
PHH_PATH = re.compile(r"^[a-z0-9-]{1,64}$")


@dataclass(eq=False)
class _Client:
    """One open event stream: its session and what is waiting to be sent."""

    session: Session
    queue: asyncio.Queue[Update] = field(default_factory=lambda: asyncio.Queue(maxsize=5000))


class Dashboard:
    """The web server of *config*, reading finished hands from the store at *store_url*."""

    def __init__(self, config: DashboardConfig, store_url: str, clock: Callable[[], float] = time.time) -> None:
        self.config, self.clock = config, clock
        self.accounts = Accounts(load_users(config.users_file), config.session_ttl, clock)
        self.room = Room(config.hole_card_delay, config.silent_after)
        self.h4h = HandForHand()
        self.link = Link(config, self._from_broker, clock)
        self._store_url = store_url
        self._store_thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="dashboard-store")
        self._store: Any = None
        self._clients: set[_Client] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._ticker: asyncio.Task[None] | None = None
        self.port = config.port
        self.counters = {"messages": 0, "commands": 0, "logins": 0, "refused": 0}
        """Broker messages taken, commands sent, logins, requests refused for the role (``hall run`` prints
        them with :meth:`report`)."""

    # -- lifecycle -------------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._headers], client_max_size=64 * 1024)
        r = app.router
        r.add_get("/login", self.login_page)
        r.add_post("/login", self.login)
        r.add_post("/logout", self.logout)
        r.add_get("/", self.index)
        r.add_get("/api/me", self.me)
        r.add_get("/api/room", self.room_view)
        r.add_get("/api/stream", self.stream)
        r.add_get("/api/table/{table}", self.table_view)
        r.add_get("/api/table/{table}/hand/{session}/{hand}.phh", self.phh)
        r.add_post("/api/command", self.command)
        r.add_post("/api/hand-for-hand", self.hand_for_hand)
        r.add_static("/static", STATIC, append_version=False)
        return app

    async def start(self) -> None:
        """Listen, connect to the broker, start the clock's ticks."""
        self._loop = asyncio.get_running_loop()
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        context = None
        if self.config.tls_cert and self.config.tls_key:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(self.config.tls_cert, self.config.tls_key)
        site = web.TCPSite(self._runner, self.config.listen, self.config.port, ssl_context=context)
        await site.start()
        server = getattr(site, "_server", None)
        if server is not None and server.sockets:
            self.port = server.sockets[0].getsockname()[1]
        await self._seed()
        self.link.start()
        self._ticker = asyncio.create_task(self._tick())

    async def _seed(self) -> None:
        """The room as the archive left it: each table's current hand and open irregularities (a restarted hall
        loses neither; the retained topics bring status, birth and state when the broker connects)."""
        def read(store: Any) -> list[tuple[str, dict[str, Any], float]]:
            topics = ("secure-event", "irregularity")
            return [m for table in store.tables() for m in replay(store.latest(table, topics))]
        try:
            messages = await self._in_store(read)
        except Exception as exc:       # an archive that cannot be read: the room starts from the broker alone
            log.error("dashboard: could not read the archive to restore the room: %s", exc)
            return
        for topic, payload, received in messages:
            self.room.feed(topic, payload, received)
        if messages:
            log.info("dashboard: room restored from the archive (%d messages)", len(messages))

    async def close(self) -> None:
        if self._ticker:
            self._ticker.cancel()
        for client in list(self._clients):       # every open stream ends now, not at its next keep-alive
            self._clients.discard(client)
            with contextlib.suppress(asyncio.QueueFull):   # a full one ends anyway: it is no longer a client
                client.queue.put_nowait(Update("close", "", None))
        self.link.close()
        if self._runner:
            await self._runner.cleanup()
        if self._store is not None:
            await self._in_store(lambda store: store.close())
        self._store_thread.shutdown(wait=True)

    def report(self) -> str:
        """One line of counts for the operator: what came, what was sent, what was refused or ignored."""
        c = self.counters
        return (f"dashboard: {c['messages']} messages, {len(self._clients)} pages open, {c['logins']} logins, "
                f"{c['commands']} commands, {c['refused']} refused for the role, {self.room.bad} messages not of "
                f"their table, {self.link.bad_replies} replies that did not verify")

    @property
    def url(self) -> str:
        scheme = "https" if self.config.tls_cert else "http"
        return f"{scheme}://{self.config.listen}:{self.port}"

    # -- the broker's side -----------------------------------------------------------------
    def _from_broker(self, topic: str, payload: Any, arrived: float) -> None:
        """On paho's thread: hand the message to the event loop."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._apply, topic, payload, arrived)

    def _apply(self, topic: str, payload: Any, arrived: float) -> None:
        self.counters["messages"] += 1
        updates = self.room.feed(topic, payload, arrived)
        self._publish(updates)
        body = payload.get("event") if isinstance(payload, dict) else None
        if topic.endswith("/event") and "/secure/" not in topic and isinstance(body, dict) \
                and body.get("kind") == "hand-ended":
            self._orders(self.h4h.hand_ended(str(payload.get("table"))))

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(0.5)
            self._publish(self.room.tick(self.clock()))

    def _tile(self, tile: dict[str, Any]) -> dict[str, Any]:
        """*tile* with its hand-for-hand state (``playing``, ``done``; None when not in hand-for-hand)."""
        return {**tile, "h4h": self.h4h.tables.get(tile["table"]) if self.h4h.active else None}

    def _publish(self, updates: list[Update]) -> None:
        for update in updates:
            if update.event == "tile":
                update = Update("tile", update.capability, self._tile(update.data))
            for client in list(self._clients):
                if update.capability in client.session.user.can:
                    try:
                        client.queue.put_nowait(update)
                    except asyncio.QueueFull:       # a stalled browser: it resyncs when it reconnects
                        self._clients.discard(client)

    def _orders(self, orders: list[Order]) -> None:
        """Send hand-for-hand's pauses and resumes (signed commands); the replies are logged."""
        for order in orders:
            for table in order.tables:
                asyncio.ensure_future(self._order(table, order.paused))
        self._publish([Update("h4h", "room", self.h4h.view())] + [Update("tile", "room", t) for t in self.room.tiles()])

    async def _order(self, table: str, paused: bool) -> None:
        reply = await self._send(table, "pause", {"paused": paused, "reason": REASON})
        if reply["status"] != "ok":
            log.error("dashboard: hand-for-hand could not %s table %s: %s %s", "pause" if paused else "resume",
                      table, reply["status"], reply["message"])

    # -- store -------------------------------------------------------------------------
    async def _in_store(self, work: Callable[..., Any], *args: Any) -> Any:
        """``work(store, *args)`` on the store's own thread (the store is opened there, on first use)."""
        def run() -> Any:
            if self._store is None:
                self._store = open_store(self._store_url)
            return work(self._store, *args)
        return await asyncio.get_running_loop().run_in_executor(self._store_thread, run)

    # -- HTTP: sessions ----------------------------------------------------------------------
    @web.middleware
    async def _headers(self, request: web.Request,
                       handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        response = await handler(request)
        for key, value in HEADERS.items():
            response.headers.setdefault(key, value)
        return response

    def _session(self, request: web.Request, capability: str | None = None) -> Session:
        session = self.accounts.session(request.cookies.get(COOKIE))
        if session is None:
            raise web.HTTPUnauthorized(text="log in first", content_type="text/plain")
        if capability is not None and capability not in session.user.can:
            self.counters["refused"] += 1
            raise web.HTTPForbidden(text=f"the {session.user.role} role may not do this ({capability})",
                                    content_type="text/plain")
        if request.method == "POST" and not same(request.headers.get("X-CSRF-Token"), session.csrf):
            raise web.HTTPForbidden(text="missing or wrong CSRF token", content_type="text/plain")
        return session

    async def login_page(self, request: web.Request, error: str = "", status: int = 200) -> web.Response:
        token = request.cookies.get(LOGIN_COOKIE) or secrets.token_urlsafe(32)
        page = (STATIC / "login.html").read_text()
        page = page.replace("{{csrf}}", html.escape(token)).replace("{{error}}", html.escape(error))
        response = web.Response(text=page, content_type="text/html", status=status)
        response.set_cookie(LOGIN_COOKIE, token, httponly=True, samesite="Strict", secure=self._tls, path="/login")
        return response

    @property
    def _tls(self) -> bool:
        return bool(self.config.tls_cert)

    async def login(self, request: web.Request) -> web.Response:
        form = await request.post()
        if not same(str(form.get("csrf", "")), request.cookies.get(LOGIN_COOKIE)):
            return await self.login_page(request, "Session expirée, réessayez / session expired, try again", 403)
        address = request.remote or "?"
        result = self.accounts.login(str(form.get("username", "")), str(form.get("password", "")), address)
        if isinstance(result, float):
            wait = max(1, round(result))
            response = await self.login_page(request, f"Trop d'essais / too many attempts: {wait} s", 429)
            response.headers["Retry-After"] = str(wait)
            return response
        if result is None:
            log.warning("dashboard: failed login for %r from %s", str(form.get("username", ""))[:64], address)
            return await self.login_page(request, "Nom ou mot de passe incorrect / wrong name or password", 401)
        self.counters["logins"] += 1
        log.info("dashboard: %s (%s) logged in from %s", result.user.name, result.user.role, address)
        response = web.HTTPSeeOther("/")
        response.set_cookie(COOKIE, result.token, httponly=True, samesite="Strict", secure=self._tls, path="/",
                            max_age=int(self.config.session_ttl))
        response.del_cookie(LOGIN_COOKIE, path="/login")
        raise response

    async def logout(self, request: web.Request) -> web.Response:
        self._session(request)
        self.accounts.logout(request.cookies.get(COOKIE))
        response = web.HTTPSeeOther("/login")
        response.del_cookie(COOKIE, path="/")
        raise response

    async def index(self, request: web.Request) -> web.StreamResponse:
        if self.accounts.session(request.cookies.get(COOKIE)) is None:
            raise web.HTTPSeeOther("/login")
        return web.FileResponse(STATIC / "index.html")

    async def me(self, request: web.Request) -> web.Response:
        s = self._session(request)
        return web.json_response({"user": s.user.name, "role": s.user.role, "can": sorted(s.user.can),
                                  "csrf": s.csrf})

    # -- HTTP: views ---------------------------------------------------------------------
    async def room_view(self, request: web.Request) -> web.Response:
        s = self._session(request, "room")
        body: dict[str, Any] = {"tables": [self._tile(t) for t in self.room.tiles()], "h4h": self.h4h.view(),
                                "now": self.clock()}
        if "queue" in s.user.can:
            body["queue"] = self.room.queue()
        return web.json_response(body)

    async def table_view(self, request: web.Request) -> web.Response:
        s = self._session(request, "table")
        name = request.match_info["table"]
        page = self.room.page(name, holes="holes" in s.user.can)
        if page is None:
            raise web.HTTPNotFound(text=f"no table {name}", content_type="text/plain")
        page["tile"] = self._tile(page["tile"])
        hands = await self._in_store(_finished, name)
        page["hands"] = hands[:50]
        return web.json_response(page)

    async def phh(self, request: web.Request) -> web.Response:
        s = self._session(request, "phh")
        name, session, hand = (request.match_info[k] for k in ("table", "session", "hand"))
        if not (PHH_PATH.match(name) and PHH_PATH.match(session) and hand.isdigit()):
            raise web.HTTPNotFound(text="no such hand", content_type="text/plain")
        holes_after = self.clock() - self.config.hole_card_delay if "holes" in s.user.can else None
        text = await self._in_store(_phh, name, session, int(hand), holes_after)
        if text is None:
            raise web.HTTPNotFound(text="no such finished hand", content_type="text/plain")
        return web.Response(text=text, content_type="text/plain", headers={
            "Content-Disposition": f'attachment; filename="{name}-{session}-{hand}.phh"'})

    async def stream(self, request: web.Request) -> web.StreamResponse:
        s = self._session(request, "room")
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store",
                                               "X-Accel-Buffering": "no"})
        await response.prepare(request)
        client = _Client(s)
        self._clients.add(client)
        try:
            await response.write(b": connected\n\n")
            while client in self._clients and self.accounts.session(s.token) is not None:
                try:
                    update = await asyncio.wait_for(client.queue.get(), KEEPALIVE)
                except TimeoutError:
                    await response.write(b": keep-alive\n\n")
                    continue
                if update.event == "close":
                    break
                data = json.dumps(update.data, separators=(",", ":"))
                await response.write(f"event: {update.event}\ndata: {data}\n\n".encode())
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self._clients.discard(client)
        return response

    # -- HTTP: commands -------------------------------------------------------------------
    async def command(self, request: web.Request) -> web.Response:
        body = await _json(request)
        name = body.get("command")
        s = self._session(request, "resolve" if name == "resolve" else "command")
        tables, args = body.get("tables"), body.get("args", {})
        if name not in PAGE_COMMANDS:
            raise _bad(f"command must be one of {', '.join(PAGE_COMMANDS)}")
        if not isinstance(tables, list) or not tables or not all(isinstance(t, str) for t in tables):
            raise _bad("tables must be a non-empty list of table ids")
        if tables == ["all"]:
            tables = [t for t in self.room.tables() if t in self.config.keys]
        if not isinstance(args, dict) or len(json.dumps(args)) > 4096:
            raise _bad("args must be an object (4 KiB at most)")
        unknown = [t for t in tables if t not in self.config.keys]
        if unknown:
            raise _bad(f"no command key for table(s) {', '.join(sorted(unknown)[:10])} on this hall server")
        if name == "resume":
            name, args = "pause", {"paused": False, **({"reason": args["reason"]} if "reason" in args else {})}
        log.info("dashboard: %s (%s) sends %s %s to %s", s.user.name, s.user.role, name, args, ", ".join(tables))
        replies = await asyncio.gather(*(self._send(t, str(name), args) for t in tables))
        return web.json_response({"replies": replies})

    async def _send(self, table: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
        self.counters["commands"] += 1
        txn = self.link.send(table, name, args)
        reply = await asyncio.get_running_loop().run_in_executor(
            None, self.link.reply, table, txn, self.config.reply_timeout)
        out: dict[str, Any] = {"table": table, "command": name, "txn": txn}
        if reply is None:
            log.warning("dashboard: no reply from %s to %s (%s)", table, name, txn)
            return {**out, "status": "no-reply", "message": f"no reply within {self.config.reply_timeout:g} s",
                    "events": None}
        error = reply.get("error")
        message = reply.get("message") or (error.get("message") if isinstance(error, dict) else None)
        return {**out, "status": reply.get("status"), "message": message, "events": reply.get("events")}

    async def hand_for_hand(self, request: web.Request) -> web.Response:
        self._session(request, "hand-for-hand")
        action = (await _json(request)).get("action")
        if action == "start":
            tables = {t: self.room.in_hand(t) for t in self.room.tables()
                      if self.room.online(t) and t in self.config.keys}
            if not tables:
                raise _bad("no online table to play hand-for-hand")
            self._orders(self.h4h.start(tables, self.clock()))
        elif action == "stop":
            self._orders(self.h4h.stop())
        else:
            raise _bad('action must be "start" or "stop"')
        return web.json_response(self.h4h.view())


async def _json(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError):
        raise _bad("the body is not JSON") from None
    if not isinstance(body, dict):
        raise _bad("the body must be a JSON object")
    return body


def _bad(text: str) -> web.HTTPBadRequest:
    return web.HTTPBadRequest(text=json.dumps({"error": text}), content_type="application/json")


def _finished(store: Any, table: str) -> list[dict[str, Any]]:
    """The table's last 50 finished hands in the store, newest first (runs on the store's thread)."""
    return [{"session": e["session"], "hand": e["hand"], "voided": bool(e.get("voided")), "ended": e.get("t")}
            for e in store.ended(table, 50)]


def _phh(store: Any, table: str, session: str, number: int, holes_before: float | None) -> str | None:
    """One finished hand as PHH; hole cards never shown at showdown are ``????`` unless the hand ended
    before *holes_before* (a surveillance account, after the delay)."""
    from hall.export import sessions
    from hall.histories import dumps, finished_hands, to_phh
    found = finished_hands(store.hand_events(table, session, number))
    if not found:
        return None
    hand = found[-1]
    birth = sessions(store, table).get(session, {})
    record = to_phh(hand, birth.get("profile"), birth.get("chip_unit"))
    ended = hand.ended.get("t")
    if holes_before is None or not isinstance(ended, (int, float)) or ended > holes_before:
        record = mask_holes(record)
    return dumps([record])


def mask_holes(record: Any) -> Any:
    """*record* (a PHH HandHistory) with the hole cards of every player who did not show them as ``????``,
    and as ``XX`` wherever the irregularities name them (a card dealt to the wrong seat, a hand killed...)."""
    from firmware_host.mqtt.public_view import mask_cards, mask_text
    from firmware_host.observations import DECK

    shown = {a.split()[0] for a in record.actions if len(a.split()) > 2 and a.split()[1] == "sm"
             and a.split()[2] != "-"}
    secret = {a.split()[3][i:i + 2] for a in record.actions if a.startswith("d dh ") and a.split()[2] not in shown
              for i in range(0, len(a.split()[3]), 2)}
    public = set(DECK) - secret
    record.actions = [f"d dh {a.split()[2]} ????" if a.startswith("d dh ") and a.split()[2] not in shown else a
                      for a in record.actions]
    for item in record.user_defined_fields.get("_irregularities", ()):
        for part in (item, item.get("resolution") or {}):
            for key, value in part.items():
                if key == "cards":
                    part[key] = list(mask_cards(value, public))
                elif isinstance(value, str):
                    part[key] = mask_text(value, public)
    return record
