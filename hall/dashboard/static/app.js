// The tournament director's dashboard, browser side (docs/dashboard.md).
//
// One `state` object holds everything the page knows; stream events and answers change it, then the
// render functions (one per view) draw it. Every text that comes from the server goes through
// textContent (the `el` helper), never innerHTML. Words come from i18n.js (`t`, `tn`, `tCode`, `lang`).
"use strict";

// -- constants --------------------------------------------------------------------------------

const VIEWS = ["room", "queue", "h4h", "commands", "table"];

/** The capability a view needs (null: everyone). */
const VIEW_CAPABILITY = { room: "room", queue: "queue", h4h: null, commands: "command", table: "table" };

const OFFLINE_STATUSES = ["offline", "silent", "stopped"];

const STREAM_EVENTS = ["tile", "queue", "h4h", "action", "holes"];

/** The form's commands: the contract's command, the argument inputs (id suffix, required), fixed args. */
const COMMANDS = {
  "set-level": {
    command: "set-level",
    args: [["small-blind", true], ["big-blind", true], ["ante", false], ["bb-ante", false]],
    fixed: {},
  },
  "pause": { command: "pause", args: [["reason", false]], fixed: { paused: true } },
  "resume": { command: "pause", args: [["reason", false]], fixed: { paused: false } },
  "move-button": { command: "move-button", args: [["seat", true]], fixed: {} },
  "void-hand": { command: "void-hand", args: [["hand", true], ["reason", true]], fixed: {}, confirm: true },
};

/** Each argument input: the contract's key, its kind, its smallest value. */
const ARGS = {
  "small-blind": { key: "small_blind", kind: "int", min: 0 },
  "big-blind": { key: "big_blind", kind: "int", min: 0 },
  "ante": { key: "ante", kind: "int", min: 0 },
  "bb-ante": { key: "big_blind_ante", kind: "int", min: 0 },
  "seat": { key: "seat", kind: "int", min: 1 },
  "hand": { key: "hand", kind: "int", min: 1 },
  "reason": { key: "reason", kind: "str", maxLength: 120 },
};

const SUITS = { s: "♠", h: "♥", d: "♦", c: "♣" };
const THIN_SPACE = "\u2009";
const MAX_REPLY_BATCHES = 10;
const AGO_REFRESH_MS = 10000;
const TABLE_REFRESH_MS = 300;
const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30000;

const naturalCompare = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" }).compare;

// -- the state ----------------------------------------------------------------------------------

const state = {
  me: null,                     // {user, role, can, csrf}
  tiles: new Map(),             // table id -> tile
  queue: [],                    // items, in the server's order (oldest first)
  h4h: null,                    // {active, round, tables, since}
  skew: 0,                      // server clock minus this browser's clock, seconds
  route: { view: "room", table: null },
  roomLoading: false,
  roomBuffer: [],               // [name, data] stream events received while /api/room was loading
  table: null,                  // the open table's page (the /api/table answer, kept live)
  tableError: null,             // why the open table could not be loaded
  tableRequest: 0,              // number of the latest /api/table request
  tableLoading: false,
  tableRefresh: null,           // the pending re-fetch of the open table (a timer)
  tileNodes: new Map(),         // table id -> its tile's element in the room
  pendingTiles: new Map(),      // table id -> a tile to draw at the next frame
  tileFrame: null,              // the requested animation frame that draws them
  tableBuffer: [],              // [name, data] stream events for the open table received while loading
  stream: null,                 // the EventSource
  streamState: "connecting",    // connecting | open | error
  streamFailed: false,          // an error happened since the last open: resync on the next open
  retryDelay: RETRY_MIN_MS,
  retryTimer: null,
  itemReplies: new Map(),       // queue item id -> {status, text}
  itemCards: new Map(),         // queue item id -> the card typed in its input
  itemBusy: new Set(),          // queue item ids being resolved
  itemSignatures: new WeakMap(),  // an item's element -> the item's JSON and language it was drawn with
  cmdForm: { table: "all", name: "set-level", values: {} },
  cmdBuiltLang: null,           // the language the command form was built in (null: to build)
  cmdBusy: false,
  cmdError: "",
  cmdReplies: [],               // newest first: {time, label, replies}
  h4hBusy: false,
  leaving: false,               // on the way to /login: stop drawing errors
};

// -- small helpers ------------------------------------------------------------------------------

function $(selector, root) {
  return (root || document).querySelector(selector);
}

/** A new element: attrs (class, text, on<event>, true for a bare attribute; null/false skipped), children. */
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = String(value);
    else if (name.startsWith("on") && typeof value === "function") node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  appendAll(node, children);
  return node;
}

function appendAll(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Replaces node's children (arrays flattened, null and false skipped). */
function fill(node, ...children) {
  node.replaceChildren();
  return appendAll(node, children);
}

function classes(...names) {
  return names.filter(Boolean).join(" ");
}

function can(capability) {
  return Boolean(state.me && Array.isArray(state.me.can) && state.me.can.includes(capability));
}

function isOffline(tile) {
  return OFFLINE_STATUSES.includes(tile.status);
}

function sortedTiles() {
  return [...state.tiles.values()].sort((a, b) => naturalCompare(String(a.table), String(b.table)));
}

/** Elements whose data-<key> is value (no selector built from server text). */
function byData(selector, key, value, root) {
  return [...(root || document).querySelectorAll(selector)].filter((node) => node.dataset[key] === String(value));
}

// -- formatting ---------------------------------------------------------------------------------

/** Chips with thin spaces between thousands: 12000 -> "12 000". */
function chips(amount) {
  if (amount === null || amount === undefined || amount === "" || !Number.isFinite(Number(amount))) return "–";
  const n = Math.round(Number(amount));
  const digits = String(Math.abs(n)).replace(/\B(?=(\d{3})+(?!\d))/g, THIN_SPACE);
  return (n < 0 ? "-" : "") + digits;
}

function serverNow() {
  return Date.now() / 1000 + state.skew;
}

function agoText(ts) {
  if (ts === null || ts === undefined || !Number.isFinite(Number(ts))) return "–";
  const s = Math.max(0, Math.round(serverNow() - Number(ts)));
  if (s < 5) return t("ago.now");
  if (s < 60) return t("ago.s", { n: s });
  if (s < 3600) return t("ago.min", { n: Math.floor(s / 60) });
  if (s < 86400) return t("ago.h", { h: Math.floor(s / 3600), m: String(Math.floor((s % 3600) / 60)).padStart(2, "0") });
  return t("ago.d", { n: Math.floor(s / 86400) });
}

function fullTime(ts) {
  return new Date(Number(ts) * 1000).toLocaleString(lang());
}

function clockText(ts) {
  if (ts === null || ts === undefined || !Number.isFinite(Number(ts))) return "–";
  return new Date(Number(ts) * 1000).toLocaleTimeString(lang(), { hour12: false });
}

/** A relative time ("2 min") kept fresh by refreshAgo(). */
function agoEl(ts) {
  const known = ts !== null && ts !== undefined && Number.isFinite(Number(ts));
  return el("time", {
    class: "ago",
    "data-ts": known ? String(ts) : null,
    datetime: known ? new Date(Number(ts) * 1000).toISOString() : null,
    title: known ? fullTime(ts) : null,
  }, agoText(ts));
}

function clockEl(ts) {
  const known = ts !== null && ts !== undefined && Number.isFinite(Number(ts));
  return el("time", {
    class: "clock",
    datetime: known ? new Date(Number(ts) * 1000).toISOString() : null,
    title: known ? fullTime(ts) : null,
  }, clockText(ts));
}

function refreshAgo() {
  for (const node of document.querySelectorAll("time.ago[data-ts]")) node.textContent = agoText(node.dataset.ts);
}

/** A card: suit symbol shown, the two-character code kept in data-card; "XX" is a card back. */
function cardEl(code) {
  const text = String(code);
  if (text === "XX" || /^\?+$/.test(text)) {
    return el("span", { class: "card back", "data-card": text, role: "img", "aria-label": "?" });
  }
  const match = /^(10|[2-9TJQKA])([shdc])$/i.exec(text);
  if (!match) return el("span", { class: "card unknown", "data-card": text }, text);
  const rank = match[1].toUpperCase() === "T" ? "10" : match[1].toUpperCase();
  const suit = match[2].toLowerCase();
  const red = suit === "h" || suit === "d";
  return el("span", { class: classes("card", red ? "red" : "black"), "data-card": text },
    el("span", { class: "rank" }, rank), el("span", { class: "suit" }, SUITS[suit]));
}

function cardsEl(cards, extraClass) {
  const list = Array.isArray(cards) ? cards : [];
  return el("span", { class: classes("cards", extraClass) }, list.map(cardEl));
}

/** "ah" -> "Ah" when it looks like a card; anything else is sent as typed (the table judges it). */
function normalizeCard(text) {
  const value = String(text || "").trim();
  const match = /^(10|[2-9TJQKA])([SHDC])$/i.exec(value);
  if (!match) return value;
  const rank = match[1] === "10" ? "T" : match[1].toUpperCase();
  return rank + match[2].toLowerCase();
}

// -- errors -------------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function showError(message) {
  if (state.leaving) return;
  const box = $("#error");
  $("#error-text").textContent = message;
  box.hidden = false;
}

function clearError() {
  $("#error").hidden = true;
  $("#error-text").textContent = "";
}

function reportError(error) {
  if (error && error.status === 401) return;
  showError(error && error.message ? error.message : String(error));
}

function goLogin() {
  state.leaving = true;
  if (state.stream) state.stream.close();
  window.location.assign("/login");
}

// -- talking to the server -------------------------------------------------------------------

async function errorText(response) {
  let text = "";
  try {
    text = await response.text();
  } catch (e) {
    text = "";
  }
  try {
    const body = JSON.parse(text);
    if (body && typeof body === "object") text = body.error || body.message || body.reason || JSON.stringify(body);
  } catch (e) {
    // not JSON: the text as it is
  }
  text = String(text).replace(/\s+/g, " ").trim();
  if (text.length > 200) text = `${text.slice(0, 200)}…`;
  return text || response.statusText || String(response.status);
}

/** GET (or POST with a JSON body) under /api/; 401 goes to /login; anything but 2xx throws ApiError. */
async function api(path, options) {
  const opts = options || {};
  const init = { method: opts.method || "GET", headers: { Accept: "application/json" }, credentials: "same-origin" };
  if (init.method !== "GET") {
    init.headers["Content-Type"] = "application/json";
    init.headers["X-CSRF-Token"] = state.me ? state.me.csrf : "";
    init.body = JSON.stringify(opts.body === undefined ? {} : opts.body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    throw new ApiError(0, t("error.network", { message: error.message }));
  }
  if (response.status === 401) {
    goLogin();
    throw new ApiError(401, "401");
  }
  if (!response.ok) {
    throw new ApiError(response.status, t("error.http", { status: response.status, message: await errorText(response) }));
  }
  try {
    return await response.json();
  } catch (error) {
    throw new ApiError(response.status, t("error.http", { status: response.status, message: error.message }));
  }
}

async function loadMe() {
  state.me = await api("/api/me");
  if (!Array.isArray(state.me.can)) state.me.can = [];
}

function applyRoom(room) {
  if (Number.isFinite(Number(room.now))) state.skew = Number(room.now) - Date.now() / 1000;
  state.tiles = new Map((room.tables || []).map((tile) => [String(tile.table), tile]));
  setQueue(Array.isArray(room.queue) ? room.queue : []);
  state.h4h = room.h4h || null;
}

async function loadRoom() {
  state.roomLoading = true;
  state.roomBuffer = [];
  try {
    const room = await api("/api/room");
    applyRoom(room);
    const buffered = state.roomBuffer;
    state.roomLoading = false;
    state.roomBuffer = [];
    for (const [name, data] of buffered) applyEvent(name, data);
  } catch (error) {
    state.roomLoading = false;
    state.roomBuffer = [];
    reportError(error);
  }
  renderAll();
}

async function loadTable(id) {
  const request = ++state.tableRequest;
  if (!state.tableLoading) state.tableBuffer = [];
  state.tableLoading = true;
  try {
    const page = await api(`/api/table/${encodeURIComponent(id)}`);
    if (request !== state.tableRequest || !isTableOpen(id)) return;
    state.table = normaliseTable(page, id);
    state.tableError = null;
    state.tableLoading = false;
    const buffered = state.tableBuffer;
    state.tableBuffer = [];
    for (const [name, data] of buffered) applyTableEvent(name, data, false);
  } catch (error) {
    if (request !== state.tableRequest || !isTableOpen(id)) return;
    state.tableLoading = false;
    state.tableBuffer = [];
    if (error.status === 401) return;
    state.tableError = error.status === 404 ? t("error.no-table", { table: id }) : error.message;
  }
  if (isTableOpen(id)) renderTablePage();
}

function normaliseTable(page, id) {
  const table = Object.assign({}, page);
  table.id = id;
  table.tile = page.tile || state.tiles.get(id) || { table: id, status: "unknown" };
  table.seats = Array.isArray(page.seats) ? page.seats.map((seat) => Object.assign({}, seat)) : [];
  table.actions = Array.isArray(page.actions) ? page.actions.slice() : [];
  table.hands = Array.isArray(page.hands) ? page.hands : [];
  table.queue = Array.isArray(page.queue) ? page.queue : [];
  table.board = Array.isArray(page.board) ? page.board : [];
  return table;
}

function isTableOpen(id) {
  return state.route.view === "table" && state.route.table === id;
}

// -- the event stream ------------------------------------------------------------------------

function openStream() {
  if (state.stream) state.stream.close();
  const source = new EventSource("/api/stream");
  state.stream = source;
  setStreamState("connecting");
  source.addEventListener("open", () => {
    setStreamState("open");
    state.retryDelay = RETRY_MIN_MS;
    if (state.streamFailed) {
      state.streamFailed = false;
      resync();
    }
  });
  source.addEventListener("error", () => {
    if (state.stream !== source) return;
    state.streamFailed = true;
    setStreamState("error");
    if (source.readyState === EventSource.CLOSED) scheduleReconnect();
  });
  for (const name of STREAM_EVENTS) source.addEventListener(name, (event) => onStreamEvent(name, event));
}

/** The browser gave up (the answer was not an event stream: maybe the session ended): check, retry. */
function scheduleReconnect() {
  if (state.retryTimer || state.leaving) return;
  const delay = state.retryDelay;
  state.retryDelay = Math.min(state.retryDelay * 2, RETRY_MAX_MS);
  state.retryTimer = window.setTimeout(async () => {
    state.retryTimer = null;
    try {
      const me = await api("/api/me");
      if (me && me.csrf) state.me.csrf = me.csrf;
    } catch (error) {
      if (error.status === 401) return;
    }
    openStream();
  }, delay);
}

function resync() {
  loadRoom();
  if (state.route.view === "table") loadTable(state.route.table);
}

function setStreamState(value) {
  state.streamState = value;
  const node = $("#conn");
  if (!node) return;
  node.dataset.state = value;
  node.textContent = t(`conn.${value}`);
}

function onStreamEvent(name, event) {
  let data;
  try {
    data = JSON.parse(event.data);
  } catch (error) {
    return;   // not JSON: nothing to draw
  }
  if (state.roomLoading && (name === "tile" || name === "queue" || name === "h4h")) state.roomBuffer.push([name, data]);
  applyEvent(name, data);
}

function applyEvent(name, data) {
  if (name === "tile") onTile(data);
  else if (name === "queue") onQueue(data);
  else if (name === "h4h") onH4h(data);
  else if (name === "action" || name === "holes") onTableStreamEvent(name, data);
}

function onTile(tile) {
  if (!tile || tile.table === undefined || tile.table === null) return;
  const id = String(tile.table);
  const isNew = !state.tiles.has(id);
  state.tiles.set(id, tile);
  if (state.route.view === "room") updateTile(tile);
  if (isNew && state.cmdBuiltLang) updateCommandTables();
  if (isTableOpen(id)) onOpenTableTile(tile);
}

function onQueue(items) {
  setQueue(Array.isArray(items) ? items : []);
  renderQueueCount();
  if (state.route.view === "queue") renderQueue();
  if (state.route.view === "table" && state.table) renderTableQueue();
}

function onH4h(h4h) {
  state.h4h = h4h || null;
  renderH4hBanner();
  renderNavState();
  if (state.route.view === "h4h") renderH4h();
}

/** The new queue; the replies and cards typed for items that left it are forgotten. */
function setQueue(items) {
  state.queue = items;
  const ids = new Set(items.map((item) => String(item.id)));
  if (state.table) for (const item of state.table.queue) ids.add(String(item.id));
  for (const id of [...state.itemReplies.keys()]) if (!ids.has(id)) state.itemReplies.delete(id);
  for (const id of [...state.itemCards.keys()]) if (!ids.has(id)) state.itemCards.delete(id);
}

function onTableStreamEvent(name, data) {
  if (!data || !isTableOpen(String(data.table))) return;
  if (state.tableLoading) state.tableBuffer.push([name, data]);
  if (state.table) applyTableEvent(name, data, true);
}

function applyTableEvent(name, data, live) {
  if (name === "action") appendAction(data, live);
  else if (name === "holes") setHoles(data, live);
  else if (name === "tile" && !live) onOpenTableTile(data);
}

/** A tile of the open table: a new hand, or a hand starting or ending, re-fetches the page. */
function onOpenTableTile(tile) {
  if (state.tableLoading) state.tableBuffer.push(["tile", tile]);
  if (!state.table || state.tableLoading) return;
  const before = state.table.tile || {};
  state.table.tile = tile;
  if (before.hand !== tile.hand || before.in_hand !== tile.in_hand) {
    loadTable(state.table.id);
  } else {
    scheduleTableRefresh(state.table.id);   // stacks, bets, board, folds: the page's seats follow the tile
  }
  renderTableHead();
}

/** Re-fetch the open table's page once the changes of a moment have arrived (at most every 300 ms). */
function scheduleTableRefresh(id) {
  if (state.tableRefresh) return;
  state.tableRefresh = setTimeout(() => {
    state.tableRefresh = null;
    if (isTableOpen(id)) loadTable(id);
  }, TABLE_REFRESH_MS);
}

// -- routes -------------------------------------------------------------------------------------

function parseHash() {
  let hash = window.location.hash.replace(/^#/, "");
  if (hash.startsWith("table/")) {
    let id = hash.slice("table/".length);
    try {
      id = decodeURIComponent(id);
    } catch (error) {
      // keep it as written
    }
    return id ? { view: "table", table: id } : { view: "room", table: null };
  }
  try {
    hash = decodeURIComponent(hash);
  } catch (error) {
    // keep it as written
  }
  return VIEWS.includes(hash) && hash !== "table" ? { view: hash, table: null } : { view: "room", table: null };
}

function route() {
  if (!state.me) return;   // start() routes once /api/me has answered
  let next = parseHash();
  const needed = VIEW_CAPABILITY[next.view];
  if (needed && !can(needed)) {
    showError(t("error.forbidden"));
    next = { view: "room", table: null };
    window.history.replaceState(null, "", "#room");
  }
  const sameTable = state.route.view === "table" && next.view === "table" && state.route.table === next.table;
  state.route = next;
  if (next.view === "table" && !sameTable) {
    state.table = null;
    state.tableError = null;
    state.tableLoading = false;
    state.tableBuffer = [];
    loadTable(next.table);
  } else if (next.view !== "table") {
    state.table = null;
    state.tableError = null;
    state.tableRequest += 1;   // an answer still on its way is for a page no longer open
    state.tableLoading = false;
    state.tableBuffer = [];
  }
  if (!sameTable) window.scrollTo(0, 0);
  renderAll();
}

// -- rendering: the shell ------------------------------------------------------------------------

function renderAll() {
  if (!state.me) return;
  renderHeader();
  renderNav();
  renderH4hBanner();
  renderQueueCount();
  for (const view of VIEWS) $(`#view-${view}`).hidden = view !== state.route.view;
  if (state.route.view === "room") renderRoom();
  else if (state.route.view === "queue") renderQueue();
  else if (state.route.view === "h4h") renderH4h();
  else if (state.route.view === "commands") renderCommands();
  else if (state.route.view === "table") renderTablePage();
}

function renderHeader() {
  const me = state.me;
  fill($("#me"),
    el("span", { class: "user" }, me.user),
    " · ",
    el("span", { class: "role", "data-role": me.role }, tCode("role", me.role)),
  );
  $("#logout-csrf").value = me.csrf || "";
  setStreamState(state.streamState);
}

function renderNav() {
  for (const link of document.querySelectorAll("#nav a[data-view]")) {
    const needed = VIEW_CAPABILITY[link.dataset.view];
    link.hidden = Boolean(needed) && !can(needed);
    const current = link.dataset.view === state.route.view;
    link.classList.toggle("active", current);
    if (current) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  renderNavState();
}

function renderNavState() {
  const link = $('#nav a[data-view="h4h"]');
  if (link) link.classList.toggle("on", Boolean(state.h4h && state.h4h.active));
}

function renderQueueCount() {
  const count = can("queue") ? state.queue.length : 0;
  const badge = $("#queue-count");
  badge.textContent = String(count);
  badge.hidden = count === 0;
  document.title = (count ? `(${count}) ` : "") + t("title");
}

function renderH4hBanner() {
  const banner = $("#h4h-banner");
  const h4h = state.h4h;
  if (!h4h || !h4h.active) {
    banner.hidden = true;
    fill(banner);
    return;
  }
  banner.hidden = false;
  fill(banner,
    el("a", { href: "#h4h" },
      el("strong", null, t("h4h.active")), " · ", t("h4h.round", { round: h4h.round }), " · ", h4hCount(h4h)),
  );
}

function h4hCount(h4h) {
  const states = Object.values(h4h.tables || {});
  return t("h4h.count", {
    playing: states.filter((s) => s === "playing").length,
    done: states.filter((s) => s === "done").length,
  });
}

// -- rendering: the room --------------------------------------------------------------------------

function renderRoom() {
  const box = $("#room");
  const tiles = sortedTiles();
  if (!tiles.length) {
    fill(box, el("p", { class: "empty" }, state.roomLoading ? t("loading") : t("room.empty")));
    return;
  }
  state.tileNodes.clear();
  state.pendingTiles.clear();
  fill(box, tiles.map((tile) => {
    const node = tileEl(tile);
    state.tileNodes.set(String(tile.table), node);
    return node;
  }));
}

/** A changed tile is drawn at the next frame: a table that changes several times within one is drawn once. */
function updateTile(tile) {
  state.pendingTiles.set(String(tile.table), tile);
  if (state.tileFrame === null) state.tileFrame = requestAnimationFrame(flushTiles);
}

function flushTiles() {
  state.tileFrame = null;
  if (state.route.view !== "room") {
    state.pendingTiles.clear();
    return;
  }
  for (const [id, tile] of state.pendingTiles) {
    const old = state.tileNodes.get(id);
    if (!old || !old.isConnected) {
      renderRoom();          // a new table: the room is drawn again, in order
      return;
    }
    morph(old, tileEl(tile));
  }
  state.pendingTiles.clear();
}

/** Gives element `old` the attributes and children of `node`, in place: a tile being clicked while its table
 *  changes keeps its element, so the press and the release land on the same one and the click counts. */
function morph(old, node) {
  for (const name of old.getAttributeNames()) if (!node.hasAttribute(name)) old.removeAttribute(name);
  for (const name of node.getAttributeNames()) {
    if (old.getAttribute(name) !== node.getAttribute(name)) old.setAttribute(name, node.getAttribute(name));
  }
  old.replaceChildren(...node.childNodes);
}

function tileEl(tile) {
  const open = Number(tile.open) || 0;
  const clickable = can("table");
  const node = el("div", {
    class: classes("tile", isOffline(tile) && "offline", open > 0 && "irregular", tile.paused && "paused",
      clickable && "clickable"),
    "data-table": tile.table,
    "data-status": tile.status || "unknown",
    "data-open": String(open),
    "data-hand": String(tile.hand ?? 0),
    role: clickable ? "link" : null,
    tabindex: clickable ? "0" : null,
  },
  el("div", { class: "tile-head" },
    el("span", { class: "tile-id" }, tile.table),
    statusEl(tile),
    agoEl(tile.since)),
  el("div", { class: "tile-meta" },
    el("span", { class: "source" }, tile.source ? tCode("source", tile.source) : "–"),
    " · ",
    el("span", { class: "profile" }, tile.profile ? t("tile.profile", { profile: tile.profile }) : t("tile.no-profile"))),
  tileDetails(tile));
  if (clickable) {
    const go = () => { window.location.hash = `#table/${encodeURIComponent(tile.table)}`; };
    node.addEventListener("click", go);
    node.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        go();
      }
    });
  }
  return node;
}

/** What a tile and a table page's head both show: level, hand, pot, seats, irregularities, alarms. */
function tileDetails(tile) {
  const open = Number(tile.open) || 0;
  const alarms = Array.isArray(tile.alarms) ? tile.alarms : [];
  return [
    el("div", { class: "level" }, levelText(tile)),
    el("div", { class: "hand" }, handText(tile)),
    el("div", { class: "pot" }, t("tile.pot", { pot: chips(tile.pot) })),
    el("div", { class: "in-play" }, t("tile.seats", { in_play: tile.in_play ?? "–", seats: tile.seats ?? "–" })),
    el("div", { class: classes("open", open > 0 && "some"), "data-count": String(open) }, tn("tile.open", open)),
    alarms.length ? el("div", { class: "alarms" }, alarms.map((alarm) => el("span", { class: "alarm" }, alarm))) : null,
    (tile.paused || tile.h4h) ? el("div", { class: "flags" },
      tile.paused ? el("span", { class: "paused-flag" }, t("tile.paused")) : null,
      tile.h4h ? el("span", { class: "h4h", "data-state": tile.h4h }, t("tile.h4h", { state: tCode("h4h", tile.h4h) })) : null,
    ) : null,
  ];
}

function statusEl(tile) {
  const status = tile.status || "unknown";
  return el("span", { class: "status", "data-value": status }, tCode("status", status));
}

function levelText(tile) {
  const blinds = Array.isArray(tile.blinds) ? tile.blinds : null;
  if (!blinds || blinds.length < 2) return t("tile.no-level");
  let text = t("tile.level", { sb: chips(blinds[0]), bb: chips(blinds[1]) });
  if (Number(tile.ante) > 0) text += ` · ${t("tile.ante", { ante: chips(tile.ante) })}`;
  return text;
}

function handText(tile) {
  if (tile.hand === null || tile.hand === undefined) return t("tile.no-hand");
  const hand = t("tile.hand", { hand: tile.hand });
  if (!tile.in_hand) return `${hand} · ${t("tile.between")}`;
  return tile.street ? `${hand} · ${tCode("street", tile.street)}` : hand;
}

// -- rendering: the queue -------------------------------------------------------------------------

function renderQueue() {
  syncItems($("#queue"), state.queue, t("queue.empty"));
}

/** Draws items into box, keeping the elements of items unchanged (a card being typed keeps its focus). */
function syncItems(box, items, emptyText) {
  if (!items.length) {
    fill(box, el("p", { class: "empty" }, emptyText));
    return;
  }
  const existing = new Map();
  for (const node of box.querySelectorAll(":scope > .item")) existing.set(node.dataset.id, node);
  const wanted = items.map((item) => {
    const old = existing.get(String(item.id));
    const signature = itemSignature(item);
    if (old && state.itemSignatures.get(old) === signature) return old;
    return itemEl(item);
  });
  const keep = new Set(wanted);
  for (const node of [...box.children]) if (!keep.has(node)) node.remove();
  wanted.forEach((node, index) => {
    if (box.children[index] !== node) box.insertBefore(node, box.children[index] || null);
  });
}

function itemSignature(item) {
  const id = String(item.id);
  const reply = state.itemReplies.get(id);
  return JSON.stringify([lang(), item, reply || null, state.itemBusy.has(id), can("resolve")]);
}

function itemEl(item) {
  const id = String(item.id);
  const french = lang() === "fr";
  const main = french ? (item.procedure_fr || item.procedure) : (item.procedure || item.procedure_fr);
  const other = french ? item.procedure : item.procedure_fr;
  const seats = Array.isArray(item.seats) && item.seats.length ? item.seats.join(", ") : t("queue.none");
  const node = el("div", { class: "item", "data-id": id, "data-table": item.table, "data-irregularity": item.irregularity },
    el("div", { class: "item-head" },
      el("span", { class: "item-table" }, item.table),
      el("span", { class: "item-hand" }, t("queue.hand", { hand: item.hand ?? "–" })),
      clockEl(item.time),
      agoEl(item.time)),
    el("h3", { class: "irregularity", title: item.irregularity }, tCode("irr", item.irregularity)),
    item.rule ? el("div", { class: "rule" }, t("queue.rule", { rule: item.rule })) : null,
    main ? el("p", { class: "procedure", lang: french && item.procedure_fr ? "fr" : "en" }, main) : null,
    other && other !== main ? el("p", { class: "procedure-alt", lang: french ? "en" : "fr" }, other) : null,
    el("div", { class: "item-seats" }, t("queue.seats", { seats })),
    Array.isArray(item.cards) && item.cards.length
      ? el("div", { class: "item-cards" }, el("span", null, t("queue.cards")), " ", cardsEl(item.cards))
      : null,
    resolveControls(item),
    itemReplyEl(id));
  state.itemSignatures.set(node, itemSignature(item));
  return node;
}

function resolveControls(item) {
  if (!can("resolve")) return null;
  const id = String(item.id);
  const options = Array.isArray(item.options) ? item.options : [];
  if (!options.length) return el("p", { class: "no-options" }, t("queue.no-options"));
  const busy = state.itemBusy.has(id);
  const input = el("input", {
    class: "card", type: "text", maxlength: "3", autocomplete: "off", autocapitalize: "none", spellcheck: "false",
    placeholder: "Ah", "aria-label": t("queue.card"), disabled: busy,
  });
  input.value = state.itemCards.get(id) || "";
  input.addEventListener("input", () => state.itemCards.set(id, input.value));
  return el("div", { class: "resolve-box" },
    el("label", { class: "card-label" }, el("span", null, t("queue.card")), input),
    el("div", { class: "options" }, options.map((option, index) => el("button", {
      type: "button",
      class: classes("resolve", index === 0 && "recommended"),
      "data-option": option,
      title: option,
      disabled: busy,
      onclick: () => resolveItem(item, option),
    }, tCode("option", option), index === 0 ? el("span", { class: "recommended-label" }, t("queue.recommended")) : null))));
}

function itemReplyEl(id) {
  if (state.itemBusy.has(id)) return el("p", { class: "sending" }, t("queue.sending"));
  const reply = state.itemReplies.get(id);
  if (!reply) return null;
  return el("div", { class: "reply", "data-status": reply.status },
    el("span", { class: "reply-status" }, tCode("reply", reply.status)),
    reply.text ? el("span", { class: "reply-message" }, reply.text) : null);
}

function findItem(id) {
  return state.queue.find((item) => String(item.id) === id)
    || (state.table ? state.table.queue.find((item) => String(item.id) === id) : undefined);
}

/** Draws an item again wherever it is shown (after its reply or while it is being sent). */
function refreshItem(id) {
  const item = findItem(id);
  if (!item) return;
  for (const node of byData(".item", "id", id)) node.replaceWith(itemEl(item));
}

async function resolveItem(item, option) {
  const id = String(item.id);
  if (state.itemBusy.has(id) || !can("resolve")) return;
  const card = normalizeCard(state.itemCards.get(id));
  const args = { decision: option };
  if (card) args.card = card;
  state.itemBusy.add(id);
  state.itemReplies.delete(id);
  refreshItem(id);
  try {
    const answer = await api("/api/command", {
      method: "POST", body: { tables: [item.table], command: "resolve", args },
    });
    const replies = Array.isArray(answer.replies) ? answer.replies : [];
    const reply = replies.find((r) => r.table === item.table) || replies[0];
    state.itemReplies.set(id, reply
      ? { status: reply.status || "error", text: replyText(reply) }
      : { status: "no-reply", text: "" });
  } catch (error) {
    if (error.status !== 401) state.itemReplies.set(id, { status: "error", text: error.message });
  } finally {
    state.itemBusy.delete(id);
  }
  refreshItem(id);
}

function replyText(reply) {
  const parts = [];
  if (reply.message) parts.push(String(reply.message));
  const events = eventsText(reply.events);
  if (events) parts.push(events);
  return parts.join(" — ");
}

function eventsText(events) {
  if (!Array.isArray(events) || !events.length) return "";
  const kinds = events.map((event) => {
    if (!event || typeof event !== "object") return String(event);
    const what = event.irregularity || event.notice || event.kind || event.type;
    if (what) return tCode("irr", what);
    const text = JSON.stringify(event);
    return text.length > 80 ? `${text.slice(0, 80)}…` : text;
  });
  return t("cmd.events", { n: events.length, kinds: kinds.join(", ") });
}

// -- rendering: a table's page --------------------------------------------------------------------

function renderTablePage() {
  const page = $("#table-page");
  const id = state.route.table;
  page.dataset.table = id;
  if (state.tableError) {
    fill(page, backLink(), el("p", { class: "error-text" }, state.tableError));
    return;
  }
  if (!state.table) {
    fill(page, backLink(), el("h2", null, t("table.title", { table: id })), el("p", { class: "empty" }, t("table.loading")));
    return;
  }
  const table = state.table;
  fill(page,
    el("div", { class: "table-head" }),
    el("section", { class: "table-queue-section" },
      el("h3", null, t("table.queue")),
      el("div", { id: "table-queue" })),
    el("section", { class: "board-section" },
      el("h3", null, t("table.board")),
      boardEl(table),
      table.button !== null && table.button !== undefined
        ? el("span", { class: "button-seat" }, t("table.button", { seat: table.button }))
        : null),
    el("section", { class: "seats-section" },
      el("h3", null, t("table.seats")),
      el("div", { class: "seats-grid" }, table.seats.map(seatEl))),
    el("section", { class: "actions-section" },
      el("h3", null, t("table.actions")),
      actionsEl(table.actions)),
    el("section", { class: "hands-section" },
      el("h3", null, t("table.hands")),
      handsEl(table)),
  );
  renderTableHead();
  renderTableQueue();
}

function backLink() {
  return el("a", { class: "back", href: "#room" }, t("table.back"));
}

function renderTableHead() {
  const head = $("#table-page .table-head");
  if (!head || !state.table) return;
  const tile = state.table.tile || {};
  head.className = classes("table-head", isOffline(tile) && "offline", Number(tile.open) > 0 && "irregular");
  fill(head,
    backLink(),
    el("h2", null, t("table.title", { table: state.table.id }),
      " ", statusEl(tile),
      " ", agoEl(tile.since)),
    el("div", { class: "tile-meta" },
      el("span", { class: "source" }, tile.source ? tCode("source", tile.source) : "–"),
      " · ",
      el("span", { class: "profile" }, tile.profile ? t("tile.profile", { profile: tile.profile }) : t("tile.no-profile"))),
    el("div", { class: "head-details" }, tileDetails(tile)),
  );
}

function boardEl(table) {
  const board = table.board;
  return el("div", { class: "board" },
    board.length ? board.map(cardEl) : el("span", { class: "empty-board" }, t("table.empty-board")));
}

function seatEl(seat) {
  const isButton = state.table && state.table.button === seat.seat;
  return el("div", {
    class: classes("seat", seat.folded && "folded", isButton && "dealer"),
    "data-seat": String(seat.seat),
  },
  el("div", { class: "seat-head" },
    el("span", { class: "seat-no" }, t("table.seat", { seat: seat.seat })),
    isButton ? el("span", { class: "dealer-chip", title: t("table.button", { seat: seat.seat }) }, t("table.dealer")) : null,
    seat.folded ? el("span", { class: "folded-flag" }, t("table.folded")) : null),
  el("div", { class: "stack" }, t("table.stack", { stack: chips(seat.stack) })),
  el("div", { class: classes("bet", !(Number(seat.bet) > 0) && "zero") }, t("table.bet", { bet: chips(seat.bet) })),
  Array.isArray(seat.shown)
    ? el("div", { class: "shown" }, el("span", { class: "label" }, t("table.shown")), " ", cardsEl(seat.shown))
    : null,
  seat.holes !== null && seat.holes !== undefined
    ? el("div", { class: "holes-line" }, el("span", { class: "label" }, t("table.holes")), " ",
      holesEl(seat.holes))
    : null);
}

function holesEl(cards) {
  return el("span", { class: "holes" }, (Array.isArray(cards) ? cards : []).map(cardEl));
}

function actionsEl(actions) {
  const list = el("ol", { id: "actions" }, actions.map(actionEl));
  if (!actions.length) list.append(el("li", { class: "empty" }, t("table.no-actions")));
  return list;
}

function actionEl(action) {
  return el("li", { "data-seq": action.seq ?? null, "data-kind": action.kind ?? null },
    clockEl(action.time), " ", el("span", { class: "text" }, action.text ?? action.kind ?? ""));
}

/** A public event of the open table: added once (by seq) and drawn at the end of #actions. */
function appendAction(action, live) {
  const table = state.table;
  if (!table) return;
  if (action.seq !== undefined && action.seq !== null && table.actions.some((a) => a.seq === action.seq)) return;
  table.actions.push(action);
  const list = $("#actions");
  if (!list) return;
  for (const empty of list.querySelectorAll("li.empty")) empty.remove();
  const atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
  list.append(actionEl(action));
  if (live && atBottom && list.offsetParent) list.lastElementChild.scrollIntoView({ block: "nearest" });
}

/** Hole cards released for a seat of the open table. */
function setHoles(data) {
  const table = state.table;
  if (!table) return;
  const seat = table.seats.find((s) => String(s.seat) === String(data.seat));
  if (!seat) return;
  seat.holes = Array.isArray(data.cards) ? data.cards : null;
  const node = byData(".seat", "seat", seat.seat, $("#table-page"))[0];
  if (node) node.replaceWith(seatEl(seat));
}

function renderTableQueue() {
  const box = $("#table-queue");
  if (!box || !state.table) return;
  const id = state.table.id;
  const items = can("queue") ? state.queue.filter((item) => String(item.table) === id) : state.table.queue;
  syncItems(box, items, t("queue.empty"));
}

function handsEl(table) {
  const list = el("ul", { id: "hands" });
  if (!table.hands.length) list.append(el("li", { class: "empty" }, t("table.no-hands")));
  for (const hand of table.hands) {
    list.append(el("li", {
      class: classes("hand-row", hand.voided && "voided"),
      "data-session": hand.session,
      "data-hand": hand.hand,
      "data-voided": hand.voided ? "true" : "false",
    },
    el("span", { class: "hand-no" }, t("table.hand", { hand: hand.hand })),
    " ", el("span", { class: "session" }, t("table.session", { session: hand.session })),
    " ", clockEl(hand.ended),
    hand.voided ? el("span", { class: "voided-flag" }, t("table.voided")) : null,
    can("phh") ? el("a", {
      class: "phh",
      href: `/api/table/${encodeURIComponent(table.id)}/hand/${encodeURIComponent(hand.session)}/${encodeURIComponent(hand.hand)}.phh`,
      download: `${table.id}-${hand.session}-${hand.hand}.phh`,
    }, t("table.phh")) : null));
  }
  return list;
}

// -- rendering: hand-for-hand ---------------------------------------------------------------------

function renderH4h() {
  const box = $("#h4h");
  const h4h = state.h4h || { active: false, round: 0, tables: {}, since: null };
  const entries = Object.entries(h4h.tables || {}).sort((a, b) => naturalCompare(a[0], b[0]));
  fill(box,
    el("div", { id: "h4h-state", "data-active": h4h.active ? "true" : "false", class: h4h.active ? "active" : null },
      el("strong", null, h4h.active ? t("h4h.active") : t("h4h.inactive")),
      h4h.active ? [" · ", el("span", { class: "round" }, t("h4h.round", { round: h4h.round }))] : null,
      h4h.active && h4h.since ? [" · ", el("span", { class: "since" }, t("h4h.since", { ago: "" })), agoEl(h4h.since)] : null,
      h4h.active ? [" · ", el("span", { class: "count" }, h4hCount(h4h))] : null),
    entries.length
      ? el("ul", { id: "h4h-tables" }, entries.map(([table, tableState]) =>
        el("li", { "data-table": table, "data-state": tableState }, el("span", { class: "h4h-table" }, table), " ",
          el("span", { class: "h4h-table-state" }, tCode("h4h", tableState)))))
      : el("p", { class: "empty" }, t("h4h.no-tables")),
    can("hand-for-hand") ? el("div", { class: "h4h-buttons" },
      el("button", { id: "h4h-start", type: "button", class: "primary", disabled: state.h4hBusy || h4h.active,
        onclick: () => postH4h("start") }, t("h4h.start")),
      el("button", { id: "h4h-stop", type: "button", disabled: state.h4hBusy || !h4h.active,
        onclick: () => postH4h("stop") }, t("h4h.stop"))) : null,
  );
}

async function postH4h(action) {
  if (state.h4hBusy) return;
  state.h4hBusy = true;
  renderH4h();
  try {
    const h4h = await api("/api/hand-for-hand", { method: "POST", body: { action } });
    if (h4h && typeof h4h === "object") state.h4h = h4h;
  } catch (error) {
    reportError(error);
  } finally {
    state.h4hBusy = false;
  }
  renderH4hBanner();
  renderNavState();
  if (state.route.view === "h4h") renderH4h();
}

// -- rendering: commands --------------------------------------------------------------------------

function renderCommands() {
  if (state.cmdBuiltLang !== lang()) buildCommandForm();
  updateCommandTables();
  showCommandArgs();
  renderCommandState();
  renderReplies();
}

/** The form, built once per language; what was typed lives in state.cmdForm and survives a rebuild. */
function buildCommandForm() {
  const form = state.cmdForm;
  const tableSelect = el("select", { id: "cmd-table", name: "table" });
  tableSelect.addEventListener("change", () => {
    form.table = tableSelect.value;
    showCommandArgs();
  });
  const nameSelect = el("select", { id: "cmd-name", name: "command" },
    Object.keys(COMMANDS).map((name) => el("option", { value: name }, t(`cmd.${name}`))));
  nameSelect.value = form.name;
  nameSelect.addEventListener("change", () => {
    form.name = nameSelect.value;
    state.cmdError = "";
    showCommandArgs();
    renderCommandState();
  });
  const argInputs = Object.entries(ARGS).map(([argId, spec]) => {
    const input = spec.kind === "int"
      ? el("input", { id: `arg-${argId}`, type: "number", min: String(spec.min), step: "1", inputmode: "numeric" })
      : el("input", { id: `arg-${argId}`, type: "text", maxlength: String(spec.maxLength), autocomplete: "off" });
    input.value = form.values[argId] || "";
    input.addEventListener("input", () => { form.values[argId] = input.value; });
    return el("label", { class: "arg", "data-arg": argId, for: `arg-${argId}` },
      el("span", { class: "arg-name" }, t(`arg.${argId}`)), input);
  });
  const formEl = el("form", { id: "cmd-form", novalidate: true },
    el("div", { class: "cmd-row" },
      el("label", { for: "cmd-table" }, el("span", { class: "arg-name" }, t("cmd.table")), tableSelect),
      el("label", { for: "cmd-name" }, el("span", { class: "arg-name" }, t("cmd.name")), nameSelect)),
    el("div", { class: "cmd-args" }, argInputs),
    el("p", { id: "cmd-error", class: "form-error", role: "alert" }),
    el("button", { id: "cmd-send", type: "submit", class: "primary" }, t("cmd.send")));
  formEl.addEventListener("submit", (event) => {
    event.preventDefault();
    sendCommand();
  });
  fill($("#commands"),
    formEl,
    el("h3", null, t("cmd.replies")),
    el("div", { id: "replies" }),
  );
  state.cmdBuiltLang = lang();
}

/** The target list: "all" and every table, the choice kept when it still exists. */
function updateCommandTables() {
  const select = $("#cmd-table");
  if (!select) return;
  const ids = sortedTiles().map((tile) => String(tile.table));
  const wanted = ["all", ...ids];
  const current = [...select.options].map((option) => option.value);
  if (wanted.join("\n") !== current.join("\n")) {
    fill(select, el("option", { value: "all" }, t("cmd.all")), ids.map((id) => el("option", { value: id }, id)));
  }
  if (!wanted.includes(state.cmdForm.table)) state.cmdForm.table = "all";
  select.value = state.cmdForm.table;
}

/** Shows the inputs the chosen command takes; placeholders give the chosen table's current values. */
function showCommandArgs() {
  const def = COMMANDS[state.cmdForm.name] || COMMANDS["set-level"];
  const used = new Map(def.args);
  const tile = state.cmdForm.table === "all" ? null : state.tiles.get(state.cmdForm.table);
  const current = tile ? {
    "small-blind": Array.isArray(tile.blinds) ? tile.blinds[0] : null,
    "big-blind": Array.isArray(tile.blinds) ? tile.blinds[1] : null,
    "ante": tile.ante,
    "hand": tile.hand,
  } : {};
  for (const label of document.querySelectorAll("#cmd-form label.arg")) {
    const argId = label.dataset.arg;
    label.hidden = !used.has(argId);
    label.classList.toggle("required", Boolean(used.get(argId)));
    const input = $("input", label);
    input.required = Boolean(used.get(argId));
    const value = current[argId];
    input.placeholder = value !== null && value !== undefined ? t("cmd.current", { value }) : "";
  }
}

function renderCommandState() {
  const button = $("#cmd-send");
  if (!button) return;
  button.disabled = state.cmdBusy;
  button.textContent = state.cmdBusy ? t("cmd.sending") : t("cmd.send");
  const error = $("#cmd-error");
  error.textContent = state.cmdError;
  error.hidden = !state.cmdError;
}

function targetTables() {
  return state.cmdForm.table === "all" ? sortedTiles().map((tile) => String(tile.table)) : [state.cmdForm.table];
}

/** The args of the chosen command from the form; throws a message for a missing or wrong value. */
function commandArgs(def) {
  const args = Object.assign({}, def.fixed);
  for (const [argId, required] of def.args) {
    const spec = ARGS[argId];
    const raw = String(state.cmdForm.values[argId] || "").trim();
    const name = t(`arg.${argId}`);
    if (!raw) {
      if (required) throw new Error(t("cmd.need", { field: name }));
      continue;
    }
    if (spec.kind === "int") {
      if (!/^\d+$/.test(raw) || Number(raw) < spec.min || !Number.isSafeInteger(Number(raw))) {
        throw new Error(t("cmd.bad-number", { field: name }));
      }
      args[spec.key] = Number(raw);
    } else {
      args[spec.key] = raw;
    }
  }
  if (Number(args.ante) > 0 && Number(args.big_blind_ante) > 0) throw new Error(t("cmd.ante-or-bb"));
  return args;
}

async function sendCommand() {
  if (state.cmdBusy || !can("command")) return;
  const name = state.cmdForm.name;
  const def = COMMANDS[name];
  const tables = targetTables();
  let args;
  try {
    if (!def) throw new Error(t("cmd.need", { field: t("cmd.name") }));
    if (!tables.length) throw new Error(t("cmd.no-table"));
    args = commandArgs(def);
  } catch (error) {
    state.cmdError = error.message;
    renderCommandState();
    return;
  }
  state.cmdError = "";
  if (def.confirm && !window.confirm(t("cmd.confirm-void", { hand: args.hand, tables: tables.join(", ") }))) {
    renderCommandState();
    return;
  }
  state.cmdBusy = true;
  renderCommandState();
  try {
    const answer = await api("/api/command", { method: "POST", body: { tables, command: def.command, args } });
    state.cmdReplies.unshift({
      time: Date.now() / 1000 + state.skew,
      label: t(`cmd.${name}`),
      name,
      replies: Array.isArray(answer.replies) ? answer.replies : [],
    });
    state.cmdReplies.length = Math.min(state.cmdReplies.length, MAX_REPLY_BATCHES);
  } catch (error) {
    if (error.status !== 401) {
      state.cmdError = error.message;
      reportError(error);
    }
  } finally {
    state.cmdBusy = false;
  }
  if (state.route.view === "commands") {
    renderCommandState();
    renderReplies();
  }
}

function renderReplies() {
  const box = $("#replies");
  if (!box) return;
  if (!state.cmdReplies.length) {
    fill(box, el("p", { class: "empty" }, t("cmd.no-replies")));
    return;
  }
  fill(box, state.cmdReplies.map((batch, index) => el("div", {
    class: classes("reply-batch", index === 0 && "latest"), "data-command": batch.name,
  },
  el("div", { class: "batch-head" }, clockEl(batch.time), " ", el("strong", null, batch.label)),
  batch.replies.map(replyEl))));
}

function replyEl(reply) {
  const status = reply.status || "error";
  return el("div", { class: "reply", "data-table": reply.table, "data-status": status },
    el("span", { class: "reply-table" }, reply.table),
    el("span", { class: "reply-status" }, tCode("reply", status)),
    el("span", { class: "reply-command" }, reply.command),
    reply.message ? el("span", { class: "reply-message" }, reply.message) : null,
    Array.isArray(reply.events) && reply.events.length ? el("span", { class: "reply-events" }, eventsText(reply.events)) : null,
    reply.txn ? el("small", { class: "reply-txn" }, reply.txn) : null);
}

// -- start ----------------------------------------------------------------------------------------

function wireShell() {
  $("#error-close").addEventListener("click", clearError);
  $("#logout-form").addEventListener("submit", logout);
  window.addEventListener("hashchange", route);
  window.addEventListener("langchange", () => {
    renderAll();
    refreshAgo();
  });
  window.setInterval(refreshAgo, AGO_REFRESH_MS);
}

async function logout(event) {
  event.preventDefault();
  const form = event.target;
  const csrf = state.me ? state.me.csrf : "";
  try {
    await fetch("/logout", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/x-www-form-urlencoded", "X-CSRF-Token": csrf },
      body: new URLSearchParams({ csrf }).toString(),
    });
  } catch (error) {
    form.submit();   // the network failed: let the browser post the form itself
    return;
  }
  goLogin();
}

async function start() {
  wireShell();
  try {
    await loadMe();
  } catch (error) {
    reportError(error);
    return;
  }
  openStream();
  route();
  await loadRoom();
}

start();
