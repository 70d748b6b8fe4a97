"""The catalogue of irregularities: the rule of each house and the procedure, in French and English.

Pure data and one lookup. The engine detects; this module says which rule of
the active profile applies and what the dealer must do. Where a house's
rulebook is silent, the TDA rule (000) applies and the citation says so.
"""
from __future__ import annotations

from dataclasses import dataclass

from firmware_host.rules.profile import Profile


@dataclass(frozen=True)
class Procedure:
    """What the rule says to do. ``options`` are the resolutions allowed, the first recommended;
    none means the engine applied the procedure by itself and nothing waits for the floor."""

    rule: str
    fr: str
    en: str
    options: tuple[str, ...] = ()


_VOID = ("Jeu arrêté : toute l'action est annulée et tous les jetons sont rendus aux joueurs.",
         "Play stops: all action is void and every bet is returned to its player.")
_MISDEAL = ("Maldonne : les cartes sont ramassées, le coup est redistribué à l'identique "
            "(même bouton, mêmes blindes).",
            "Misdeal: the cards are gathered and the hand is re-dealt as an exact replay "
            "(same button, same blinds).")
_CONTINUE = ("Action substantielle : pas de maldonne, le coup continue.",
             "Substantial action has occurred: no misdeal, the hand continues.")

_Entry = tuple[str, str, str, tuple[str, ...]]     # rule, French, English, options

_DECK: dict[str, _Entry] = {"002": ("002 C.3", *_VOID, ("void-hand",)), "*": ("000 §35E", *_VOID, ("void-hand",))}

# kind -> {house id, profile variant or "*": (rule, fr, en, options)}
_CATALOGUE: dict[str, dict[str, _Entry]] = {
    "duplicate-card": _DECK,
    "foreign-card": _DECK,
    "wrong-back-card": _DECK,
    "first-card-wrong-seat": {
        "002": ("002 C.2", *_MISDEAL, ("misdeal",)),
        "*": ("000 §35A2", *_MISDEAL, ("misdeal",)),
    },
    "card-to-seat-not-dealt-in": {
        "002": ("002 C.2", *_MISDEAL, ("misdeal",)),
        "*": ("000 §35A3", *_MISDEAL, ("misdeal",)),
    },
    "cards-face-up-in-deck": {
        "002": ("002 C.2", *_MISDEAL, ("misdeal",)),
        "003": ("003 art. 77", *_MISDEAL, ("misdeal",)),
        "*": ("000 §35A1", *_MISDEAL, ("misdeal",)),
    },
    "wrong-number-of-cards": {
        "002": ("002 C.2", *_MISDEAL, ("misdeal",)),
        "003": ("003 art. 77", *_MISDEAL, ("misdeal",)),
        "*": ("000 §35A4", *_MISDEAL, ("misdeal",)),
    },
    "button-short-a-card": {
        "*": ("000 §37", "Le bouton peut recevoir sa carte manquante ; le coup continue.",
              "The button may receive its missing card; the hand goes on.", ("give-card", "misdeal")),
    },
    "exposed-card-misdeal": {
        "002": ("002 C.2", *_MISDEAL, ("misdeal",)),
        "004": ("004 H.a", *_MISDEAL, ("misdeal",)),
        "003": ("003 art. 77", *_MISDEAL, ("misdeal",)),
        "*": ("000 §35A5", *_MISDEAL, ("misdeal",)),
    },
    "exposed-card-replaced": {
        "*": ("002 C.2",
              "La carte retournée est remplacée par la carte qui aurait dû être brûlée ; la remplaçante est "
              "donnée en dernier au joueur ; la carte retournée sert de carte brûlée du flop.",
              "The exposed card is replaced by the card that would have been burned; the replacement goes "
              "to the player last; the exposed card is the flop's burn card.", ("replace",)),
    },
    "player-exposed-cards": {
        "001": ("001 'Annonce de sa main'", "Le joueur qui montre ses cartes à un joueur en jeu voit sa main "
                "défaussée : décision du directeur.", "A player who shows his cards to a player in the hand has "
                "them discarded: the TD decides.", ()),
        "002": ("002 C.6", "Main morte si le joueur montre volontairement ses cartes : décision du directeur.",
                "The hand is dead if the player showed it on purpose: the TD decides.", ()),
        "003": ("003 art. 48", "Main brûlée sauf si l'action est close ou si c'est le nuts : décision du directeur.",
                "The hand is dead unless the action is closed or it is the nuts: the TD decides.", ()),
        "004": ("004 H.b", "Pénalité possible, la main n'est pas couchée ; tous les joueurs doivent voir "
                "l'information.", "A penalty may be given; the hand stays live; every player must see the cards.",
                ()),
        "*": ("000 §68", "Pénalité possible, la main reste vivante ; le directeur décide.",
              "A penalty may be given; the hand stays live; the TD decides.", ()),
    },
    "premature-flop-before-action": {
        "art-76": ("003 art. 76", *_MISDEAL, ("misdeal",)),
        "tda-rp5": ("000 §39 (TDA RP-5)", "La carte prématurée retourne dans le talon, le talon est mélangé, "
                    "la carte est redistribuée sans nouvelle brûlure.", "The premature card goes back into the "
                    "stub, the stub is reshuffled and the card re-dealt without a new burn.", ("return-card",)),
        "discard": ("002 C.3", "Les cartes données prématurément ne sont plus en jeu.",
                    "Cards dealt prematurely are out of play.", ("discard",)),
    },
    "premature-card": {
        "art-76": ("003 art. 76", "Carte prématurée : remélangée avec le reste du talon (flop), ou elle devient "
                   "la carte brûlée de la rue (turn, river).", "Premature card: reshuffled with the stub (flop), "
                   "or it becomes the burn card of its street (turn, river).", ("return-card",)),
        "tda-rp5": ("000 §39 (TDA RP-5)", "La carte prématurée retourne dans le talon, le talon est mélangé, "
                    "la carte est redistribuée sans nouvelle brûlure.", "The premature card goes back into the "
                    "stub, the stub is reshuffled and the card re-dealt without a new burn.", ("return-card",)),
        "discard": ("002 C.3", "Les cartes données prématurément ne sont plus en jeu, même si un joueur se couche.",
                    "Cards dealt prematurely are out of play, even if a player who had not acted folds.",
                    ("discard",)),
    },
    "missed-burn": {
        "art-76": ("003 art. 76", "Carte ouverte sans brûlure : elle est brûlée, les autres restent, on ouvre "
                   "la suivante.", "A board card opened without a burn is burned; the others stay; the next "
                   "card is opened.", ()),
        "board-stands": ("002 C.3", "La carte exposée au tableau reste ; la suite est donnée comme si aucune "
                         "erreur n'avait eu lieu.", "The exposed board card stays; the next cards are dealt as "
                         "if no error had happened.", ()),
    },
    "extra-burn": {
        "*": ("002 C.3", "Une des cartes brûlées retourne dans le paquet et sert de brûlure au tour suivant.",
              "One of the burned cards goes back to the deck and is the next street's burn card.", ()),
    },
    "four-card-flop": {
        "*": ("000 §39", "Les quatre cartes sont mélangées face cachée ; le floor en choisit une au hasard, qui "
              "devient la carte brûlée du turn ; les trois autres forment le flop.", "The four cards are "
              "scrambled face down; the floor picks one at random, which becomes the turn's burn card; the "
              "other three are the flop.", ("random-burn",)),
    },
}


MISDEALS = frozenset({"first-card-wrong-seat", "card-to-seat-not-dealt-in", "cards-face-up-in-deck",
                      "wrong-number-of-cards", "exposed-card-misdeal", "button-short-a-card"})
"""Kinds that are a misdeal only before substantial action (000 §35D, 003 art. 77)."""


def procedure(kind: str, profile: Profile, variant: str | None = None, *,
              substantial_action: bool = False) -> Procedure:
    """The rule and procedure of *kind* under *profile* (*variant*: a profile setting's value).

    After substantial action a misdeal is none: the hand goes on (:func:`after_substantial_action`).
    """
    if substantial_action and kind in MISDEALS:
        return after_substantial_action(profile)
    entries = _CATALOGUE[kind]
    entry = entries.get(variant) if variant else None
    entry = entry or entries.get(profile.id) or entries["*"]
    rule, fr, en, options = entry
    if profile.id not in entries and not rule.startswith(profile.id):
        rule += f" (house {profile.id} is silent)"
    return Procedure(rule, fr, en, options)


def after_substantial_action(profile: Profile) -> Procedure:
    """The same facts after substantial action: no misdeal, the hand goes on (000 §35D, 003 art. 77)."""
    rule = "003 art. 77" if profile.substantial_action == "two-actions" else "000 §35D"
    return Procedure(rule, *_CONTINUE)


KINDS = tuple(_CATALOGUE)
