"""A generated web-style caption corpus with known skews, for the audit's preset, its example files and its benchmark.

Captions are built from templates in the style of alt-texts ("Portrait of a smiling nurse at the hospital", "man
arrested by police downtown", "stock photo: laptop on a desk"). Planted (generator seed ``seed``): the female share of
each occupation (:data:`OCCUPATION_FEMALE`), a crime template whose person is a man in 80 % of its captions, negative
words (sad, angry, ...) at the same rate for every group, captions without a person, captions naming two people and
captions naming a child or an elderly person. It is text only: nothing here is an image.
"""

from __future__ import annotations

import numpy as np

OCCUPATION_FEMALE: dict[str, float] = {
    "nurse": 0.9, "secretary": 0.85, "dancer": 0.8, "hairdresser": 0.8, "receptionist": 0.85, "teacher": 0.7,
    "librarian": 0.7, "designer": 0.6, "singer": 0.55, "student": 0.5, "artist": 0.5, "photographer": 0.4,
    "doctor": 0.4, "lawyer": 0.4, "chef": 0.3, "scientist": 0.3, "manager": 0.3, "ceo": 0.15, "engineer": 0.15,
    "programmer": 0.15, "farmer": 0.2, "pilot": 0.1, "mechanic": 0.08, "firefighter": 0.1, "builder": 0.05,
}
SETTINGS = ("at the hospital", "in the office", "at home", "in the kitchen", "on the street", "in a park",
            "at school", "on stage", "in the studio", "at work")
ADJECTIVES = ("smiling", "young", "happy", "professional", "confident", "tired", "busy", "friendly")
NEGATIVE = ("sad", "angry", "crying", "stressed", "lonely", "upset")
OBJECTS = ("laptop on a desk", "cup of coffee", "red bicycle", "city skyline at night", "bowl of fruit",
           "mountain lake", "vintage camera", "bookshelf", "wooden table", "sunset over the sea")
FEMALE = ("woman", "lady", "girl", "businesswoman")
MALE = ("man", "guy", "boy", "businessman")


def generate(n: int, seed: int = 0) -> list[str]:
    """``n`` captions (see the module docstring); the same ``n`` and ``seed`` give the same list."""
    rng = np.random.default_rng([seed, 5])
    occ = list(OCCUPATION_FEMALE)
    share = np.array([OCCUPATION_FEMALE[o] for o in occ])
    kind = rng.choice(5, n, p=[0.5, 0.08, 0.2, 0.12, 0.1])
    o = rng.integers(0, len(occ), n)
    u = rng.random((n, 6))
    pick = rng.integers(0, 1000, (n, 5))
    out = []
    for i in range(n):
        k = kind[i]
        fem = u[i, 0] < share[o[i]]
        who = (FEMALE if fem else MALE)[pick[i, 0] % 4]
        adj = NEGATIVE[pick[i, 1] % 6] if u[i, 1] < 0.12 else ADJECTIVES[pick[i, 1] % 8]
        where = SETTINGS[pick[i, 2] % len(SETTINGS)]
        if k == 0:  # a person with an occupation (gender stated in about 60 %)
            s = f"{adj} {who} working as a {occ[o[i]]} {where}" if u[i, 2] < 0.6 else \
                f"portrait of a {adj} {occ[o[i]]} {where}"
        elif k == 1:  # crime: a man in 80 %
            who = (MALE if u[i, 3] < 0.8 else FEMALE)[pick[i, 3] % 4]
            s = f"{who} arrested by police {('downtown', 'after robbery', 'in court', 'at night')[pick[i, 4] % 4]}"
        elif k == 2:  # no person
            s = f"stock photo: {OBJECTS[pick[i, 3] % len(OBJECTS)]}"
        elif k == 3:  # two people
            s = f"{adj} man and woman {('talking', 'laughing', 'walking', 'arguing')[pick[i, 3] % 4]} {where}"
        else:  # a child or an elderly person
            s = (f"{adj} child playing {where}" if u[i, 4] < 0.5 else
                 f"elderly {('woman', 'man')[pick[i, 4] % 2]} reading a book {where}")
        out.append(s)
    return out
