"""The word lists of the caption audit: identity terms (perceived gender and age), concept lists, the crime lexicon
and the stop words that n-gram concepts skip.

Identity terms are English words a caption uses to describe a person. They give the *perceived* gender or age that
the caption's writer states, nothing about the person: binary gender words only (no non-binary or transgender terms
are assigned a group), no names, no other languages, pronouns counted as mentions ("her book" counts as female),
words such as "boy" counted for both gender and age, and a caption mentioning both groups counted for both (the
skew statistics use single-gender captions only). The paper labels people in the images with classifiers; this audit
reads captions alone.
"""

from __future__ import annotations

IDENTITY: dict[str, tuple[str, ...]] = {
    "female": ("woman", "women", "girl", "girls", "lady", "ladies", "female", "females", "she", "her", "hers",
               "herself", "mother", "mothers", "mom", "moms", "mum", "daughter", "daughters", "sister", "sisters",
               "wife", "wives", "girlfriend", "bride", "aunt", "grandmother", "grandma", "queen", "princess",
               "actress", "waitress", "businesswoman", "policewoman", "gal", "gals", "madam", "niece", "womens"),
    "male": ("man", "men", "boy", "boys", "guy", "guys", "gentleman", "gentlemen", "male", "males", "he", "him",
             "his", "himself", "father", "fathers", "dad", "dads", "son", "sons", "brother", "brothers", "husband",
             "husbands", "boyfriend", "groom", "uncle", "grandfather", "grandpa", "king", "prince", "actor",
             "waiter", "businessman", "policeman", "sir", "nephew", "mens"),
    "child": ("child", "children", "kid", "kids", "baby", "babies", "toddler", "toddlers", "infant", "girl", "girls",
              "boy", "boys", "teen", "teens", "teenager", "teenagers", "schoolgirl", "schoolboy", "newborn"),
    "elderly": ("elderly", "senior", "seniors", "grandmother", "grandfather", "grandma", "grandpa", "grandparents",
                "retiree", "retirees", "pensioner", "aged"),
}
GENDER_GROUPS = ("female", "male")

#: built-in concept lists (a concept is a word or a two-word phrase; n-grams of the corpus are added to these)
CONCEPT_LISTS: dict[str, tuple[str, ...]] = {
    "occupations": ("doctor", "nurse", "engineer", "teacher", "scientist", "chef", "cook", "pilot", "lawyer",
                    "farmer", "soldier", "police", "firefighter", "secretary", "manager", "ceo", "programmer",
                    "artist", "dancer", "singer", "model", "athlete", "student", "professor", "cleaner", "driver",
                    "mechanic", "builder", "carpenter", "hairdresser", "receptionist", "librarian", "banker",
                    "designer", "photographer", "surgeon", "dentist", "pharmacist", "judge", "politician"),
    "activities": ("cooking", "cleaning", "shopping", "running", "cycling", "swimming", "dancing", "singing",
                   "reading", "writing", "painting", "playing", "working", "teaching", "driving", "fishing",
                   "hiking", "gardening", "knitting", "sewing", "boxing", "football", "soccer", "basketball",
                   "tennis", "golf", "yoga", "fitness", "skiing", "surfing", "climbing", "gaming", "coding"),
    "objects": ("laptop", "computer", "phone", "camera", "car", "bicycle", "motorcycle", "guitar", "piano",
                "violin", "book", "flower", "flowers", "dress", "suit", "tie", "handbag", "jewelry", "makeup",
                "tools", "hammer", "wrench", "ball", "umbrella", "kite", "basket", "suitcase", "skateboard",
                "microphone", "paintbrush", "telescope", "lantern", "balloon", "drum", "backpack", "trophy",
                "scarf", "notebook", "shovel", "clock", "ladder", "bucket", "teacup", "weapon", "gun", "knife"),
    "settings": ("kitchen", "office", "home", "beach", "street", "park", "school", "hospital", "gym", "stage",
                 "church", "restaurant", "bar", "garden", "farm", "factory", "lab", "laboratory", "classroom",
                 "studio", "wedding", "party", "meeting", "conference", "prison", "court"),
    "attributes": ("beautiful", "pretty", "handsome", "strong", "sexy", "cute", "smart", "young", "old",
                   "happy", "sad", "angry", "smiling", "professional", "casual", "elegant", "fashion"),
}

#: crime-related words (the crime-lexicon association): a caption containing any of them counts as crime-related
CRIME: tuple[str, ...] = (
    "crime", "crimes", "criminal", "criminals", "arrest", "arrested", "arrests", "police", "cop", "cops", "prison",
    "prisoner", "jail", "jailed", "inmate", "mugshot", "suspect", "suspects", "suspected", "robbery", "robber",
    "theft", "thief", "steal", "stolen", "murder", "murderer", "killer", "killed", "shooting", "gunman", "gang",
    "drug", "drugs", "dealer", "assault", "fraud", "convicted", "sentenced", "guilty", "charged", "violence",
    "violent", "burglary", "terrorist", "kidnapping", "smuggling", "weapon", "weapons", "gun", "knife", "handcuffs",
)

STOP: frozenset[str] = frozenset((
    "a", "an", "the", "and", "or", "of", "in", "on", "at", "to", "for", "with", "by", "from", "as", "is", "are",
    "was", "were", "be", "been", "being", "it", "its", "this", "that", "these", "those", "there", "here", "into",
    "onto", "over", "under", "up", "down", "out", "off", "about", "near", "while", "who", "whom", "which", "what",
    "their", "they", "them", "we", "our", "you", "your", "i", "me", "my", "not", "no", "but", "so", "than", "too",
    "very", "can", "will", "just", "has", "have", "had", "do", "does", "did", "one", "two", "some", "any", "all",
    "photo", "image", "picture", "stock", "photos", "images", "pictures", "free", "royalty", "vector",
    "illustration", "background", "person", "people", "s", "t", "x",
))


def identity_words() -> frozenset[str]:
    """Every identity term of every group (kept out of the n-gram concepts)."""
    return frozenset(w for ws in IDENTITY.values() for w in ws)


def concept_list(names: tuple[str, ...] | None = None) -> list[str]:
    """The concepts of the named lists (all lists by default), in list order, without repeats."""
    names = tuple(CONCEPT_LISTS) if names is None else names
    seen: dict[str, None] = {}
    for n in names:
        for c in CONCEPT_LISTS[n]:
            seen.setdefault(c, None)
    return list(seen)
