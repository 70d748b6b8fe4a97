"""Who may use the dashboard: accounts with roles, password hashes, sessions, CSRF tokens, login throttling.

Accounts live in a TOML file the hall's operator writes with ``tablectl hall user add`` (argon2id hashes,
never a password)::

    [users.marie]
    role = "td"
    hash = "$argon2id$v=19$m=65536,t=3,p=4$..."

Roles and what each may do (docs/dashboard.md "Who sees what") are :data:`CAPABILITIES`.
"""
from __future__ import annotations

import hmac
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from firmware_host.configfile import ConfigError, Section, read_toml

CAPABILITIES: dict[str, frozenset[str]] = {
    "td": frozenset({"room", "queue", "resolve", "table", "phh", "command", "hand-for-hand"}),
    "floor": frozenset({"room", "queue", "resolve"}),
    "surveillance": frozenset({"room", "table", "phh", "holes"}),
}
"""Each role's capabilities: ``holes`` (hole cards, after the delay) is surveillance's alone."""

NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_.")


@dataclass(frozen=True)
class User:
    name: str
    role: str
    hash: str

    @property
    def can(self) -> frozenset[str]:
        return CAPABILITIES[self.role]


def load_users(path: str | Path) -> dict[str, User]:
    """The accounts of the users file; ConfigError names the file and the bad key."""
    top = Section(read_toml(path, str(path)), str(path))
    out = {}
    users = top.section("users", required=False)
    for name in list(users.data):
        entry = users.section(name)
        _check_name(name, users)
        role = entry.get_str("role", choices=CAPABILITIES)
        hashed = entry.get_str("hash", nonempty=True)
        if not hashed.startswith("$argon2"):
            raise entry.error("hash", "is not an argon2 hash (write it with `tablectl hall user add`)")
        out[name] = User(name, role, hashed)
    top.finish()
    return out


def _check_name(name: str, where: Section) -> None:
    if not name or len(name) > 64 or not set(name) <= NAME_CHARS:
        raise where.error(name, "a user name is 1-64 characters of a-z 0-9 - _ .")


def add_user(path: str | Path, name: str, role: str, password: str) -> None:
    """Add or replace account *name* in the users file *path* (made 0600 if new)."""
    if role not in CAPABILITIES:
        raise ValueError(f"role {role!r} is not one of {', '.join(CAPABILITIES)}")
    if not name or len(name) > 64 or not set(name) <= NAME_CHARS:
        raise ValueError("a user name is 1-64 characters of a-z 0-9 - _ .")
    if len(password) < 10:
        raise ValueError("a password has at least 10 characters")
    path = Path(path)
    users = load_users(path) if path.exists() else {}
    users[name] = User(name, role, PasswordHasher().hash(password))
    lines = ["# the dashboard's accounts: tablectl hall user add NAME --role td|floor|surveillance --users FILE"]
    for user in users.values():
        lines += ["", f"[users.{user.name}]", f'role = "{user.role}"', f'hash = "{user.hash}"']
    path.touch(mode=0o600, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


@dataclass
class Session:
    token: str
    user: User
    csrf: str
    expires: float


@dataclass
class Throttle:
    """At most *limit* failed logins per *window* seconds for one name and for one address."""

    limit: int = 5
    window: float = 300.0
    _failures: dict[str, deque[float]] = field(default_factory=dict)

    def wait(self, keys: tuple[str, ...], now: float) -> float:
        """Seconds before *keys* may try again (0: now)."""
        longest = 0.0
        for key in keys:
            times = self._failures.get(key)
            while times and now - times[0] >= self.window:
                times.popleft()
            if times and len(times) >= self.limit:
                longest = max(longest, times[0] + self.window - now)
        return longest

    def failed(self, keys: tuple[str, ...], now: float) -> None:
        for key in keys:
            self._failures.setdefault(key, deque(maxlen=self.limit)).append(now)

    def forget(self, key: str) -> None:
        self._failures.pop(key, None)


class Accounts:
    """The users, their sessions and the login throttle. *clock* is injected (tests turn it)."""

    def __init__(self, users: dict[str, User], session_ttl: float = 12 * 3600,
                 clock: Callable[[], float] = time.time) -> None:
        self.users, self.session_ttl, self.clock = users, session_ttl, clock
        self.sessions: dict[str, Session] = {}
        self.throttle = Throttle()                 # per name: 5 failures in 5 min
        self.address_throttle = Throttle(limit=30)  # per address (a shared NAT): 30
        self._hasher = PasswordHasher()
        self._dummy = self._hasher.hash(secrets.token_hex(16))   # the same work for an unknown name

    def login(self, name: str, password: str, address: str) -> Session | float | None:
        """A new session; None for a wrong name or password; the seconds to wait when throttled."""
        now = self.clock()
        keys, where = (f"user:{name[:64]}",), (f"addr:{address}",)
        wait = max(self.throttle.wait(keys, now), self.address_throttle.wait(where, now))
        if wait > 0:
            return wait
        user = self.users.get(name)
        try:
            self._hasher.verify(user.hash if user else self._dummy, password)
        except (VerificationError, InvalidHashError):
            user = None
        if user is None:
            self.throttle.failed(keys, now)
            self.address_throttle.failed(where, now)
            return None
        self.throttle.forget(keys[0])
        session = Session(secrets.token_urlsafe(32), user, secrets.token_urlsafe(32), now + self.session_ttl)
        self.sessions[session.token] = session
        return session

    def session(self, token: str | None) -> Session | None:
        """The live session of cookie *token*."""
        if not token:
            return None
        found = self.sessions.get(token)
        if found is None:
            return None
        if found.expires <= self.clock() or found.user.name not in self.users:
            del self.sessions[token]
            return None
        return found

    def logout(self, token: str | None) -> None:
        if token:
            self.sessions.pop(token, None)


def same(a: str | None, b: str | None) -> bool:
    """Constant-time comparison of two tokens (None never matches)."""
    return a is not None and b is not None and hmac.compare_digest(a.encode(), b.encode())


__all__ = ["CAPABILITIES", "Accounts", "ConfigError", "Session", "User", "add_user", "load_users", "same"]
