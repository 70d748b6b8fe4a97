// The dashboard's words, in French and English, and the current language.
//
// t(key, vars) looks a key up in the current language (then English, then the key itself) and replaces
// "{name}" by vars.name. The language is localStorage 'lang', else the browser's (French when it starts
// with "fr"). setLang() switches without a reload: it translates every [data-i18n] element and dispatches
// a "langchange" event on window, which app.js answers by rendering again.
"use strict";

const I18N = {
  fr: {
    "title": "Directeur de tournoi",
    "login.title": "Connexion",
    "login.username": "Nom d'utilisateur",
    "login.password": "Mot de passe",
    "login.submit": "Se connecter",
    "lang.fr": "FR",
    "lang.en": "EN",
    "lang.switch": "Langue",
    "logout": "Déconnexion",
    "loading": "Chargement…",
    "close": "Fermer",

    "nav.room": "Salle",
    "nav.queue": "File",
    "nav.h4h": "Main par main",
    "nav.commands": "Commandes",

    "role.td": "directeur",
    "role.floor": "floor",
    "role.surveillance": "surveillance",

    "conn.connecting": "connexion…",
    "conn.open": "en direct",
    "conn.error": "reconnexion…",

    "error.http": "Erreur {status} : {message}",
    "error.network": "Réseau injoignable : {message}",
    "error.forbidden": "Votre rôle ne permet pas cette page.",
    "error.no-table": "Table introuvable : {table}",

    "status.online": "en ligne",
    "status.offline": "hors ligne",
    "status.stopped": "arrêtée",
    "status.silent": "muette",
    "status.unknown": "inconnu",

    "source.devices": "capteurs",
    "source.demo": "démo",
    "source.recording": "enregistrement",

    "street.preflop": "pré-flop",
    "street.flop": "flop",
    "street.turn": "turn",
    "street.river": "river",
    "street.showdown": "abattage",

    "ago.now": "à l'instant",
    "ago.s": "{n} s",
    "ago.min": "{n} min",
    "ago.h": "{h} h {m}",
    "ago.d": "{n} j",
    "since": "depuis {ago}",

    "room.empty": "Aucune table.",
    "tile.profile": "maison {profile}",
    "tile.no-profile": "maison ?",
    "tile.level": "{sb}/{bb}",
    "tile.ante": "ante {ante}",
    "tile.no-level": "niveau ?",
    "tile.hand": "main {hand}",
    "tile.no-hand": "pas de main",
    "tile.between": "entre deux mains",
    "tile.pot": "pot {pot}",
    "tile.seats": "{in_play} en jeu / {seats} places",
    "tile.open.one": "{n} irrégularité",
    "tile.open.other": "{n} irrégularités",
    "tile.paused": "EN PAUSE",
    "tile.h4h": "main par main : {state}",

    "h4h.playing": "en jeu",
    "h4h.done": "terminée",
    "h4h.title": "Main par main",
    "h4h.active": "Main par main en cours",
    "h4h.inactive": "Main par main arrêté",
    "h4h.round": "tour {round}",
    "h4h.since": "depuis {ago}",
    "h4h.count": "en jeu : {playing}, terminées : {done}",
    "h4h.start": "Démarrer le main par main",
    "h4h.stop": "Arrêter le main par main",
    "h4h.no-tables": "Aucune table.",

    "queue.title": "Irrégularités en attente",
    "queue.empty": "Aucune irrégularité en attente.",
    "queue.hand": "main {hand}",
    "queue.rule": "Règle {rule}",
    "queue.seats": "Places : {seats}",
    "queue.cards": "Cartes :",
    "queue.recommended": "recommandé",
    "queue.card": "Carte (facultative)",
    "queue.none": "aucune",
    "queue.no-options": "Aucune décision à prendre ici.",
    "queue.sending": "Envoi…",

    "table.title": "Table {table}",
    "table.back": "← Salle",
    "table.button": "bouton : place {seat}",
    "table.board": "Tableau",
    "table.seats": "Places",
    "table.seat": "Place {seat}",
    "table.stack": "tapis {stack}",
    "table.bet": "mise {bet}",
    "table.folded": "couché",
    "table.dealer": "B",
    "table.shown": "montrées",
    "table.holes": "privatives",
    "table.actions": "Actions de la main",
    "table.no-actions": "Aucune action.",
    "table.hands": "Mains terminées",
    "table.no-hands": "Aucune main terminée.",
    "table.hand": "Main {hand}",
    "table.session": "session {session}",
    "table.voided": "annulée",
    "table.phh": "PHH",
    "table.queue": "Irrégularités de cette table",
    "table.loading": "Chargement de la table…",
    "table.empty-board": "—",

    "cmd.title": "Commandes",
    "cmd.table": "Table",
    "cmd.all": "toutes les tables",
    "cmd.name": "Commande",
    "cmd.set-level": "changer le niveau",
    "cmd.pause": "pause",
    "cmd.resume": "reprise",
    "cmd.move-button": "déplacer le bouton",
    "cmd.void-hand": "annuler une main",
    "cmd.resolve": "décision",
    "arg.small-blind": "Petite blinde",
    "arg.big-blind": "Grosse blinde",
    "arg.ante": "Ante",
    "arg.bb-ante": "Ante grosse blinde",
    "arg.seat": "Place",
    "arg.hand": "Main n°",
    "arg.reason": "Raison",
    "cmd.send": "Envoyer",
    "cmd.sending": "Envoi…",
    "cmd.replies": "Réponses",
    "cmd.no-replies": "Aucune réponse pour l'instant.",
    "cmd.confirm-void": "Annuler la main {hand} sur {tables} ? Toutes les mises sont rendues et la main est rejouée.",
    "cmd.need": "Champ requis : {field}",
    "cmd.bad-number": "Nombre entier positif attendu : {field}",
    "cmd.ante-or-bb": "Ante ou ante grosse blinde, pas les deux.",
    "cmd.no-table": "Aucune table choisie.",
    "cmd.events": "événements ({n}) : {kinds}",
    "cmd.current": "actuel : {value}",

    "reply.ok": "ok",
    "reply.accepted-not-applied": "acceptée, pas appliquée",
    "reply.error": "erreur",
    "reply.no-reply": "pas de réponse",

    "option.void-hand": "annuler la main",
    "option.misdeal": "maldonne",
    "option.dead-hand": "main morte",
    "option.give-card": "donner la carte",
    "option.replace": "remplacer la carte",
    "option.discard": "défausser",
    "option.return-card": "remettre la carte",
    "option.burn-for-river": "brûler pour la river",
    "option.burn-for-turn": "brûler pour le turn",
    "option.random-burn": "brûlée au hasard",
    "option.confirm": "confirmer",

    "irr.duplicate-card": "carte en double",
    "irr.foreign-card": "carte étrangère",
    "irr.wrong-back-card": "carte au mauvais dos",
    "irr.first-card-wrong-seat": "première carte à la mauvaise place",
    "irr.card-to-seat-not-dealt-in": "carte à une place hors du coup",
    "irr.cards-face-up-in-deck": "cartes retournées dans le paquet",
    "irr.wrong-number-of-cards": "mauvais nombre de cartes",
    "irr.extra-card-dead-hand": "carte en trop, main morte",
    "irr.button-short-a-card": "carte manquante au bouton",
    "irr.exposed-card-misdeal": "carte exposée, maldonne",
    "irr.exposed-card-replaced": "carte exposée remplacée",
    "irr.player-exposed-cards": "joueur a exposé ses cartes",
    "irr.premature-flop-before-action": "flop prématuré avant la fin des enchères",
    "irr.premature-card": "carte prématurée",
    "irr.missed-burn": "brûlée oubliée",
    "irr.extra-burn": "brûlée en trop",
    "irr.four-card-flop": "flop de quatre cartes",
    "irr.device-fault": "panne d'un capteur",
    "irr.floor-called": "floor appelé",
  },
  en: {
    "title": "Tournament director",
    "login.title": "Sign in",
    "login.username": "Username",
    "login.password": "Password",
    "login.submit": "Sign in",
    "lang.fr": "FR",
    "lang.en": "EN",
    "lang.switch": "Language",
    "logout": "Sign out",
    "loading": "Loading…",
    "close": "Close",

    "nav.room": "Room",
    "nav.queue": "Queue",
    "nav.h4h": "Hand-for-hand",
    "nav.commands": "Commands",

    "role.td": "director",
    "role.floor": "floor",
    "role.surveillance": "surveillance",

    "conn.connecting": "connecting…",
    "conn.open": "live",
    "conn.error": "reconnecting…",

    "error.http": "Error {status}: {message}",
    "error.network": "Network unreachable: {message}",
    "error.forbidden": "Your role cannot open this page.",
    "error.no-table": "No such table: {table}",

    "status.online": "online",
    "status.offline": "offline",
    "status.stopped": "stopped",
    "status.silent": "silent",
    "status.unknown": "unknown",

    "source.devices": "devices",
    "source.demo": "demo",
    "source.recording": "recording",

    "street.preflop": "preflop",
    "street.flop": "flop",
    "street.turn": "turn",
    "street.river": "river",
    "street.showdown": "showdown",

    "ago.now": "just now",
    "ago.s": "{n} s",
    "ago.min": "{n} min",
    "ago.h": "{h} h {m}",
    "ago.d": "{n} d",
    "since": "for {ago}",

    "room.empty": "No tables.",
    "tile.profile": "house {profile}",
    "tile.no-profile": "house ?",
    "tile.level": "{sb}/{bb}",
    "tile.ante": "ante {ante}",
    "tile.no-level": "level ?",
    "tile.hand": "hand {hand}",
    "tile.no-hand": "no hand",
    "tile.between": "between hands",
    "tile.pot": "pot {pot}",
    "tile.seats": "{in_play} in play / {seats} seats",
    "tile.open.one": "{n} irregularity",
    "tile.open.other": "{n} irregularities",
    "tile.paused": "PAUSED",
    "tile.h4h": "hand-for-hand: {state}",

    "h4h.playing": "playing",
    "h4h.done": "done",
    "h4h.title": "Hand-for-hand",
    "h4h.active": "Hand-for-hand in progress",
    "h4h.inactive": "Hand-for-hand off",
    "h4h.round": "round {round}",
    "h4h.since": "for {ago}",
    "h4h.count": "{playing} playing, {done} done",
    "h4h.start": "Start hand-for-hand",
    "h4h.stop": "Stop hand-for-hand",
    "h4h.no-tables": "No tables.",

    "queue.title": "Irregularities waiting",
    "queue.empty": "No irregularity waiting.",
    "queue.hand": "hand {hand}",
    "queue.rule": "Rule {rule}",
    "queue.seats": "Seats: {seats}",
    "queue.cards": "Cards:",
    "queue.recommended": "recommended",
    "queue.card": "Card (optional)",
    "queue.none": "none",
    "queue.no-options": "No decision to take here.",
    "queue.sending": "Sending…",

    "table.title": "Table {table}",
    "table.back": "← Room",
    "table.button": "button: seat {seat}",
    "table.board": "Board",
    "table.seats": "Seats",
    "table.seat": "Seat {seat}",
    "table.stack": "stack {stack}",
    "table.bet": "bet {bet}",
    "table.folded": "folded",
    "table.dealer": "D",
    "table.shown": "shown",
    "table.holes": "hole cards",
    "table.actions": "This hand's actions",
    "table.no-actions": "No action yet.",
    "table.hands": "Finished hands",
    "table.no-hands": "No finished hand.",
    "table.hand": "Hand {hand}",
    "table.session": "session {session}",
    "table.voided": "voided",
    "table.phh": "PHH",
    "table.queue": "This table's irregularities",
    "table.loading": "Loading the table…",
    "table.empty-board": "—",

    "cmd.title": "Commands",
    "cmd.table": "Table",
    "cmd.all": "all tables",
    "cmd.name": "Command",
    "cmd.set-level": "set level",
    "cmd.pause": "pause",
    "cmd.resume": "resume",
    "cmd.move-button": "move button",
    "cmd.void-hand": "void hand",
    "cmd.resolve": "resolve",
    "arg.small-blind": "Small blind",
    "arg.big-blind": "Big blind",
    "arg.ante": "Ante",
    "arg.bb-ante": "Big blind ante",
    "arg.seat": "Seat",
    "arg.hand": "Hand number",
    "arg.reason": "Reason",
    "cmd.send": "Send",
    "cmd.sending": "Sending…",
    "cmd.replies": "Replies",
    "cmd.no-replies": "No reply yet.",
    "cmd.confirm-void": "Void hand {hand} on {tables}? Every bet is returned and the hand is replayed.",
    "cmd.need": "Required: {field}",
    "cmd.bad-number": "A whole positive number is needed: {field}",
    "cmd.ante-or-bb": "Ante or big blind ante, not both.",
    "cmd.no-table": "No table chosen.",
    "cmd.events": "events ({n}): {kinds}",
    "cmd.current": "now: {value}",

    "reply.ok": "ok",
    "reply.accepted-not-applied": "accepted, not applied",
    "reply.error": "error",
    "reply.no-reply": "no reply",

    "option.void-hand": "void the hand",
    "option.misdeal": "misdeal",
    "option.dead-hand": "dead hand",
    "option.give-card": "give the card",
    "option.replace": "replace the card",
    "option.discard": "discard",
    "option.return-card": "return the card",
    "option.burn-for-river": "burn for the river",
    "option.burn-for-turn": "burn for the turn",
    "option.random-burn": "random burn",
    "option.confirm": "confirm",
  },
};

const LANGS = ["fr", "en"];

function detectLang() {
  let stored = null;
  try {
    stored = window.localStorage.getItem("lang");
  } catch (e) {
    stored = null;   // storage disabled: fall back to the browser's language
  }
  if (LANGS.includes(stored)) return stored;
  const nav = (navigator.language || navigator.userLanguage || "en").toLowerCase();
  return nav.startsWith("fr") ? "fr" : "en";
}

let currentLang = detectLang();

function lang() {
  return currentLang;
}

function hasKey(key) {
  return key in I18N[currentLang] || key in I18N.en;
}

function t(key, vars) {
  let text = I18N[currentLang][key];
  if (text === undefined) text = I18N.en[key];
  if (text === undefined) text = key;
  if (vars) {
    text = text.replace(/\{(\w+)\}/g, (whole, name) => (name in vars ? String(vars[name]) : whole));
  }
  return text;
}

// A count: key + ".one" when n is 1 (or 0 in French), else key + ".other"; vars get n.
function tn(key, n, vars) {
  const one = n === 1 || (n === 0 && currentLang === "fr");
  return t(`${key}.${one ? "one" : "other"}`, Object.assign({ n }, vars || {}));
}

// A code such as "four-card-flop" in words: its translation under prefix when there is one, else
// the code with spaces ("four card flop"), readable in both languages.
function tCode(prefix, code) {
  if (code === null || code === undefined) return "";
  const key = `${prefix}.${code}`;
  return hasKey(key) ? t(key) : String(code).replace(/[-_]+/g, " ");
}

function applyI18n(root) {
  const scope = root || document;
  for (const el of scope.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of scope.querySelectorAll("[data-i18n-title]")) el.title = t(el.dataset.i18nTitle);
  for (const el of scope.querySelectorAll("[data-i18n-placeholder]")) el.placeholder = t(el.dataset.i18nPlaceholder);
  document.documentElement.lang = currentLang;
  for (const code of LANGS) {
    const button = document.getElementById(`lang-${code}`);
    if (button) {
      button.classList.toggle("active", code === currentLang);
      button.setAttribute("aria-pressed", String(code === currentLang));
    }
  }
}

function setLang(code) {
  if (!LANGS.includes(code)) return;
  currentLang = code;
  try {
    window.localStorage.setItem("lang", code);
  } catch (e) {
    // storage disabled: the choice lasts until the page is left
  }
  applyI18n();
  window.dispatchEvent(new CustomEvent("langchange", { detail: { lang: code } }));
}

function wireLangButtons() {
  for (const code of LANGS) {
    const button = document.getElementById(`lang-${code}`);
    if (button) button.addEventListener("click", () => setLang(code));
  }
  applyI18n();
}

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", wireLangButtons);
} else {
  wireLangButtons();
}
