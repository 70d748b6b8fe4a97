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
_REPLACED = ("La carte retournée est remplacée par la carte qui aurait dû être brûlée ; la remplaçante est "
             "donnée en dernier au joueur ; la carte retournée sert de carte brûlée du flop.",
             "The exposed card is replaced by the card that would have been burned; the replacement goes "
             "to the player last; the exposed card is the flop's burn card.")
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
    "extra-card-dead-hand": {
        "003": ("003 art. 78", "Main brûlée : le joueur a trois cartes ou plus ; ses cartes sont mortes, ses "
                "jetons restent au pot, le coup continue sans lui.", "Dead hand: the player holds three cards "
                "or more; his cards are dead, his chips stay in the pot, the hand goes on without him.",
                ("dead-hand",)),
        "*": ("000 §38", "Après une action substantielle, la main qui a un mauvais nombre de cartes est morte : "
              "toutes ses cartes sont muckées, ses jetons restent au pot ; la donne reprend normalement, une "
              "seule carte brûlée par rue.", "After substantial action, a hand with the wrong number of cards "
              "is dead: all its cards are mucked, its chips stay in the pot; the deal resumes normally, one "
              "burn card per street.", ("dead-hand",)),
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
        "002": ("002 C.2", *_REPLACED, ("replace",)),
        "000": ("000 §35A5: no misdeal (neither one of the first two cards nor two cards); the replacement is "
                "TDA practice, house 000 is silent on it", *_REPLACED, ("replace",)),
        "*": ("000 §35A5: no misdeal; the replacement is TDA practice", *_REPLACED, ("replace",)),
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
        "art-76": ("003 art. 76", "Flop prématuré après deux enchères ou plus : on le remélange uniquement avec "
                   "le reste du talon (sans les cartes couchées) ; la carte brûlée reste, le flop est redonné.",
                   "Premature flop after two or more bets: it is reshuffled with the rest of the stub only (not "
                   "the folded cards); the burn card stays and the flop is dealt again.", ("return-card",)),
        "art-76-turn": ("003 art. 76", "Turn prématuré : on remet la carte brûlée sur le dessus du talon, on "
                        "brûle la carte ouverte, puis la troisième carte à partir du bas du talon devient la "
                        "carte du turn.", "Premature turn: the burn card goes back on top of the stub, the "
                        "opened card is burned, then the third card from the bottom of the stub becomes the "
                        "turn.", ("burn-for-turn",)),
        "art-76-river": ("003 art. 76", "River prématurée : on remet la carte brûlée sur le dessus du talon, on "
                         "brûle la carte ouverte ; une fois les enchères du turn terminées, on brûle la première "
                         "carte du talon et on ouvre la suivante, qui devient la river.", "Premature river: the "
                         "burn card goes back on top of the stub and the opened card is burned; once the turn's "
                         "betting is over, the first card of the stub is burned and the next one opened as the "
                         "river.", ("burn-for-river",)),
        "tda-rp5": ("000 §39 (TDA RP-5)", "La carte prématurée retourne dans le talon, le talon est mélangé, "
                    "la carte est redistribuée sans nouvelle brûlure.", "The premature card goes back into the "
                    "stub, the stub is reshuffled and the card re-dealt without a new burn.", ("return-card",)),
        "discard": ("002 C.3", "Les cartes données prématurément ne sont plus en jeu, même si un joueur se couche.",
                    "Cards dealt prematurely are out of play, even if a player who had not acted folds.",
                    ("discard",)),
    },
    "missed-burn": {
        "art-76": ("003 art. 76", "Carte ouverte sans brûlure : on brûle la première carte ouverte (le croupier "
                   "la pose sur la brûlure), les autres restent, on ouvre la suivante.", "A street opened without "
                   "a burn: its first opened card is burned (the dealer moves it to the burn spot), the others "
                   "stay, the next card is opened.", ()),
        "board-stands": ("002 C.3", "La carte exposée au tableau reste ; la suite est donnée comme si aucune "
                         "erreur n'avait eu lieu.", "The exposed board card stays; the next cards are dealt as "
                         "if no error had happened.", ()),
    },
    "extra-burn": {
        "*": ("002 C.3", "Une des cartes brûlées retourne dans le paquet et sert de brûlure au tour suivant.",
              "One of the burned cards goes back to the deck and is the next street's burn card.", ()),
        "held": ("000 §39", "La carte brûlée retourne sur le talon : la carte gardée par la décision est la carte "
                 "brûlée de ce tour ; elle va sur la brûlure et la carte du tour est donnée sans nouvelle brûlure.",
                 "The burned card goes back on top of the stub: the card the ruling kept is this street's burn; it "
                 "goes to the burn spot and the street is dealt without a new burn.", ()),
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
    if not rule.startswith(profile.id):      # another house's rule (a variant, or the TDA's) applies here
        rule += f" (house {profile.id} is silent)"
    return Procedure(rule, fr, en, options)


def after_substantial_action(profile: Profile) -> Procedure:
    """The same facts after substantial action: no misdeal, the hand goes on (000 §35D, 003 art. 77)."""
    rule = "003 art. 77" if profile.substantial_action == "two-actions" else "000 §35D"
    return Procedure(rule, *_CONTINUE)


KINDS = tuple(_CATALOGUE)


# -- reports: what the engine refuses or cannot place, outside the catalogue above ------------------

_TD = "000 §1"      # the TD decides, in the interest of fairness: where no rule of the house applies

# kind -> {house id or "*": (rule, what to do in French)}; the English is the engine's own detail.
_REPORTS: dict[str, dict[str, tuple[str, str]]] = {
    "chips-without-hand": {"*": (_TD, "Jetons dans une zone de mise entre deux coups : le croupier les rend au "
                                      "joueur avant le coup suivant.")},
    "chips-from-seat-not-in-hand": {"*": (_TD, "Jetons poussés par un siège qui n'a pas de main vivante : le "
                                               "croupier les rend au joueur.")},
    "declaration-without-hand": {"*": (_TD, "Annonce d'un siège sans main vivante : elle est sans effet.")},
    "chips-unreadable": {"*": (_TD, "La caméra ne peut pas lire ces jetons : le croupier étale la mise et "
                                    "confirme le montant.")},
    "push-refused": {"*": (_TD, "Mise impossible à ce montant : le croupier rend la différence au joueur et "
                                "lui indique le montant permis.")},
    "fold-refused": {"000": ("000 §58", "Passe refusée : le joueur qui n'a pas de mise à suivre peut checker ; "
                                        "le croupier rend les cartes au joueur.")},
    "card-without-hand": {"*": (_TD, "Carte lue entre deux coups : le croupier la remet avec le paquet.")},
    "hole-card-refused": {"*": (_TD, "Carte refusée pour ce siège : le croupier vérifie la donne et appelle le "
                                     "floor si nécessaire.")},
    "card-to-wrong-board-spot": {
        "003": ("003 art. 76", "Carte posée au mauvais emplacement du tableau : le croupier la replace selon "
                               "l'art. 76 (carte brûlée ou ouverte comme il l'indique)."),
        "*": (_TD, "Carte posée au mauvais emplacement du tableau : le croupier la place à l'emplacement dû, "
                   "ou appelle le floor."),
    },
    "board-refused": {"*": (_TD, "Carte du tableau refusée : le croupier vérifie le tableau et appelle le floor.")},
    "pause-unchanged": {"*": (_TD, "La table est déjà dans cet état : rien ne change.")},
    "no-such-hand": {"*": (_TD, "Ce coup n'est pas en cours : la décision du directeur ne peut pas "
                                "s'appliquer ; vérifier le numéro du coup.")},
    "nothing-to-resolve": {"*": (_TD, "Aucune irrégularité en attente : rien à trancher.")},
    "bad-resolution": {"*": (_TD, "Cette décision ne règle pas l'irrégularité en attente : choisir une des "
                                  "options proposées.")},
    "device-fault": {"*": (_TD, "Panne d'un appareil de la table : vérifier l'appareil ; le coup ne continue "
                                "que lorsque le croupier confirme que chaque carte a été lue.")},
    "unknown-seat": {"*": (_TD, "Ce siège n'existe pas à cette table : vérifier le placement.")},
    "seat-change-during-hand": {"*": (_TD, "Le siège est dans le coup : placer le joueur après le coup.")},
    "player-left": {
        "004": ("004 F.b", "Le joueur a quitté la table avec une main vivante : sa main est morte, les jetons "
                           "déjà misés restent au pot."),
        "*": ("000 §31", "Le joueur a quitté la table avec une main vivante : sa main est morte, les jetons "
                         "déjà misés restent au pot."),
    },
    "button-move-during-hand": {"*": (_TD, "Le bouton ne se déplace qu'entre deux coups.")},
    "button-on-empty-seat": {"*": (_TD, "Le bouton ne peut être placé que devant un joueur : refaire le tirage.")},
    "hand-in-progress": {"*": (_TD, "Le coup en cours n'est pas terminé : le finir avant d'en commencer un autre.")},
    "cannot-start-hand": {"*": (_TD, "Le coup ne peut pas commencer : vérifier les joueurs assis et leurs tapis.")},
    "no-button": {"*": (_TD, "Placer d'abord le bouton (tirage au sort du bouton).")},
    "no-hand": {"*": (_TD, "Aucun coup en cours : la touche est sans effet.")},
    "misdeal-after-substantial-action": {
        "003": ("003 art. 77", "Une action a déjà été couverte deux fois : pas de maldonne, le coup continue."),
        "*": ("000 §35D", "Action substantielle : pas de maldonne, le coup continue."),
    },
    "misdeal": {
        "002": ("002 C.2", _MISDEAL[0]),
        "003": ("003 art. 77", _MISDEAL[0]),
        "*": ("000 §35C", _MISDEAL[0]),
    },
    "floor-called": {"*": (_TD, "Le croupier a appelé le floor : le jeu attend sa décision.")},
    "confirm-facing-bet": {"*": (_TD, "Le joueur fait face à une mise : des jetons dans la zone pour suivre ou "
                                      "relancer, ses cartes au muck pour passer.")},
    "nothing-to-confirm": {"*": (_TD, "Rien à confirmer : la table attend l'action indiquée.")},
}


def report_procedure(kind: str, profile: Profile) -> Procedure:
    """The rule (of the active house, or the TDA's saying the house is silent) and the French procedure of
    a report: something the engine refused or could not place (``device-fault:<fault>`` shares one entry)."""
    entries = _REPORTS[kind.split(":", 1)[0]]
    rule, fr = entries.get(profile.id) or entries.get("*") or next(iter(entries.values()))
    if not rule.startswith(profile.id):
        rule += f" (house {profile.id} is silent)"
    return Procedure(rule, fr, "")


REPORTS = tuple(_REPORTS)
