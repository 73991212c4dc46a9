"""Word lists shared by the synthetic generators (:mod:`veridic.synth`) and the detector.

One place for every lexical relation that training data and detection must agree on:
if the generator teaches the model that "bought" reverses "sold", the detector flags
the same pair as a relation error.

>>> ANTONYMS["won"], ANTONYMS["lost"]
('lost', 'won')
>>> REVERSALS["before"], is_symmetric_predicate("meet")
('after', True)
>>> CONVERSES["buy"]
('sell', 'from', 'to')
"""

from __future__ import annotations

# Small hand lexicon of flips that turn a statement into its contrary.
# Symmetric; each inflected form listed explicitly so no lemmatiser is needed.
_ANTONYM_PAIRS = [
    ("increase", "decrease"), ("increased", "decreased"), ("increases", "decreases"),
    ("increasing", "decreasing"), ("rise", "fall"), ("rose", "fell"), ("rises", "falls"),
    ("rising", "falling"), ("risen", "fallen"), ("won", "lost"), ("win", "lose"), ("wins", "loses"),
    ("winning", "losing"), ("before", "after"), ("more", "less"), ("higher", "lower"),
    ("highest", "lowest"), ("larger", "smaller"), ("largest", "smallest"), ("bigger", "smaller"),
    ("biggest", "smallest"), ("first", "last"), ("early", "late"), ("earlier", "later"),
    ("best", "worst"), ("better", "worse"), ("accepted", "rejected"), ("accept", "reject"),
    ("approved", "rejected"), ("approve", "reject"), ("allowed", "banned"), ("allow", "ban"),
    ("open", "closed"), ("opened", "closed"), ("support", "oppose"), ("supported", "opposed"),
    ("supports", "opposes"), ("agreed", "refused"), ("true", "false"), ("success", "failure"),
    ("successful", "unsuccessful"), ("legal", "illegal"), ("possible", "impossible"),
    ("likely", "unlikely"), ("strong", "weak"), ("stronger", "weaker"), ("young", "old"),
    ("younger", "older"), ("youngest", "oldest"), ("male", "female"), ("men", "women"),
    ("man", "woman"), ("boys", "girls"), ("boy", "girl"), ("husband", "wife"), ("son", "daughter"),
    ("father", "mother"), ("brother", "sister"), ("north", "south"), ("east", "west"),
    ("northern", "southern"), ("eastern", "western"), ("entered", "left"), ("arrived", "departed"),
    ("bought", "sold"), ("buy", "sell"), ("buying", "selling"), ("gained", "lost"),
    ("positive", "negative"), ("guilty", "innocent"), ("always", "never"), ("all", "none"),
    ("maximum", "minimum"), ("above", "below"), ("inside", "outside"), ("public", "private"),
    ("cheap", "expensive"), ("cheaper", "more expensive"), ("hired", "fired"), ("raised", "lowered"),
    ("started", "ended"), ("began", "ended"), ("lowest", "highest"), ("least", "most"),
    ("minority", "majority"), ("Democrat", "Republican"), ("Democrats", "Republicans"),
    ("Democratic", "Republican"),
    ("previous", "next"), ("preceding", "following"),
]
_ANTONYMS: dict[str, str] = {}
for _a, _b in _ANTONYM_PAIRS:
    _ANTONYMS.setdefault(_a, _b)
    _ANTONYMS.setdefault(_b, _a)

_NEG_CONTRACTIONS = {"don't": "do", "doesn't": "does", "didn't": "did", "isn't": "is", "aren't": "are",
                     "wasn't": "was", "weren't": "were", "won't": "will", "can't": "can",
                     "couldn't": "could", "wouldn't": "would", "shouldn't": "should", "hasn't": "has",
                     "haven't": "have", "hadn't": "had", "mustn't": "must"}

ANTONYMS: dict[str, str] = _ANTONYMS
NEG_CONTRACTIONS: dict[str, str] = _NEG_CONTRACTIONS

# Relation reversals: the word on the right states the reverse temporal, comparative or
# directional relation. Used by the `relation_reversal` contrast rule and by the
# detector's relation check. Subset of ANTONYMS plus comparatives and directions.
_REVERSAL_PAIRS = [
    ("before", "after"), ("earlier", "later"), ("preceded", "followed"), ("precedes", "follows"),
    ("larger", "smaller"), ("bigger", "smaller"), ("higher", "lower"), ("more", "fewer"),
    ("older", "younger"), ("longer", "shorter"), ("taller", "shorter"), ("faster", "slower"),
    ("heavier", "lighter"), ("richer", "poorer"), ("stronger", "weaker"), ("above", "below"),
    ("bought", "sold"), ("buys", "sells"), ("buy", "sell"), ("won", "lost"), ("wins", "loses"), ("win", "lose"),
    ("started", "ended"), ("began", "ended"), ("starts", "ends"), ("opened", "closed"),
    ("increased", "decreased"), ("rose", "fell"), ("gained", "lost"), ("raised", "lowered"),
    ("hired", "fired"), ("entered", "left"), ("arrived", "departed"), ("joined", "left"),
    ("accepted", "rejected"), ("approved", "rejected"), ("supported", "opposed"), ("allowed", "banned"),
    ("defeated", "lost to"), ("exported", "imported"), ("lent", "borrowed"), ("gave", "received"),
    ("teaches", "learns from"), ("succeeded", "preceded"), ("inherited", "bequeathed"),
    # Institutional acts and their undoing: only verb forms, so nouns ("an issue", "a list") never flip.
    ("issued", "revoked"), ("issues", "revokes"), ("released", "recalled"), ("listed", "delisted"),
    ("founded", "dissolved"), ("winning", "losing"),
]
REVERSALS: dict[str, str] = {}
for _a, _b in _REVERSAL_PAIRS:
    REVERSALS.setdefault(_a, _b)
    REVERSALS.setdefault(_b, _a)

# Converse predicates (lemma -> (converse lemma, preposition before the third party in the
# first frame, preposition in the converse frame)): "A bought X from B" == "B sold X to A".
# Swapping the arguments *and* the verb keeps the meaning (a faithful counterpart); swapping
# only one of them reverses it.
CONVERSES: dict[str, tuple[str, str, str]] = {
    "buy": ("sell", "from", "to"), "sell": ("buy", "to", "from"),
    "lend": ("borrow", "to", "from"), "borrow": ("lend", "from", "to"),
    "give": ("receive", "to", "from"), "receive": ("give", "from", "to"),
    "teach": ("learn", "to", "from"),
}

# Predicates whose subject and object can be exchanged without changing the meaning
# ("A met B" == "B met A"). Argument swaps over these are entailed, not contradicted.
SYMMETRIC_PREDICATES: frozenset[str] = frozenset({
    "meet", "marry", "divorce", "date", "resemble", "equal", "match", "tie", "draw", "merge",
    "collide", "partner", "negotiate", "debate", "wed", "befriend", "border", "neighbor", "neighbour",
    "intersect", "adjoin", "fight", "battle", "compete", "correspond", "agree", "talk",
    "chat", "meet with", "hug", "kiss", "coincide", "rival", "touch",
    # relational nouns ("A, a friend of B" == "B, a friend of A")
    "friend", "colleague", "teammate", "cousin", "sibling", "spouse", "ally", "classmate", "roommate", "counterpart",
    "opponent", "twin", "peer", "contemporary", "compatriot", "co-star", "costar", "namesake", "relative",
})


def is_symmetric_predicate(lemma: str) -> bool:
    """True when exchanging the predicate's subject and object keeps the meaning."""
    return lemma.lower() in SYMMETRIC_PREDICATES


# Quantifier changes that break entailment (left -> replacement).
QUANTIFIER_FLIPS: dict[str, str] = {
    # Every replacement must be something the original does not entail: "all" entails "some",
    # so "all" becomes "only some", never "some".
    "all": "only some", "every": "no", "each": "no", "always": "only sometimes", "never": "sometimes",
    "most": "few", "many": "few", "few": "many", "none": "all", "several": "no",
    "everyone": "no one", "everybody": "nobody", "nobody": "everybody", "nothing": "everything",
    "everything": "nothing", "both": "neither", "neither": "both", "often": "rarely", "rarely": "often",
    "usually": "rarely", "majority": "minority", "minority": "majority",
}

# Meaning-preserving word swaps (same part of speech and inflection), used for the faithful
# `synonym` rule. Kept conservative: each pair is interchangeable in news and encyclopaedic text.
_SYNONYM_PAIRS = [
    ("bought", "purchased"), ("buy", "purchase"), ("acquired", "bought"), ("acquired", "purchased"), ("acquire", "buy"),
    ("acquire", "purchase"), ("acquires", "buys"), ("began", "started"), ("begin", "start"),
    ("begins", "starts"), ("beginning", "start"), ("ended", "finished"), ("said", "stated"),
    ("says", "states"), ("told", "informed"), ("big", "large"), ("huge", "enormous"), ("small", "little"),
    ("quickly", "rapidly"), ("fast", "quick"), ("car", "automobile"), ("cars", "automobiles"),
    ("film", "movie"), ("films", "movies"), ("shop", "store"), ("shops", "stores"), ("died", "passed away"),
    ("help", "assist"), ("helped", "assisted"), ("helps", "assists"), ("attempt", "try"), ("attempted", "tried"),
    ("show", "demonstrate"), ("showed", "demonstrated"), ("shows", "demonstrates"), ("enough", "sufficient"),
    ("about", "approximately"), ("roughly", "approximately"), ("nearly", "almost"), ("children", "kids"),
    ("chose", "selected"), ("choose", "select"), ("picked", "chose"), ("needed", "required"), ("needs", "requires"),
    ("need", "require"), ("received", "got"), ("obtained", "got"), ("received", "obtained"), ("main", "principal"),
    ("major", "significant"), ("important", "significant"), ("answer", "reply"), ("answered", "replied"),
    ("build", "construct"), ("built", "constructed"), ("builds", "constructs"), ("wealthy", "rich"),
    ("mistake", "error"), ("mistakes", "errors"), ("occurred", "happened"), ("occurs", "happens"),
    ("enemy", "foe"), ("enemies", "foes"), ("journey", "trip"), ("town", "township"), ("job", "position"),
    ("jobs", "positions"), ("award", "prize"), ("awards", "prizes"), ("doctor", "physician"),
    ("doctors", "physicians"), ("lawyer", "attorney"), ("lawyers", "attorneys"), ("spoke", "talked"),
    ("announced", "declared"), ("announces", "declares"), ("finished", "completed"), ("complete", "finish"),
    ("rise", "increase"), ("rose", "increased"), ("fell", "declined"), ("falls", "declines"),
    ("destroyed", "demolished"), ("killed", "slain"), ("allowed", "permitted"), ("allow", "permit"),
    ("forbade", "prohibited"), ("banned", "prohibited"), ("area", "region"), ("areas", "regions"),
    ("country", "nation"), ("countries", "nations"), ("company", "firm"), ("companies", "firms"),
    ("leader", "head"), ("officials", "authorities"), ("residents", "inhabitants"),
]
SYNONYMS: dict[str, tuple[str, ...]] = {}
for _a, _b in _SYNONYM_PAIRS:
    SYNONYMS[_a] = tuple(dict.fromkeys((*SYNONYMS.get(_a, ()), _b)))
    SYNONYMS[_b] = tuple(dict.fromkeys((*SYNONYMS.get(_b, ()), _a)))

# Irregular past participles (past tense form -> participle) for passivisation. Regular
# verbs ("acquired") use their -ed form; a verb in neither class is left alone.
IRREGULAR_PARTICIPLES: dict[str, str] = {
    "wrote": "written", "took": "taken", "gave": "given", "began": "begun", "ate": "eaten", "saw": "seen",
    "chose": "chosen", "drove": "driven", "broke": "broken", "stole": "stolen", "spoke": "spoken",
    "forgave": "forgiven", "forgot": "forgotten", "froze": "frozen", "hid": "hidden", "knew": "known",
    "rode": "ridden", "shook": "shaken", "threw": "thrown", "woke": "woken", "wore": "worn", "tore": "torn",
    "bore": "borne", "beat": "beaten", "bit": "bitten", "blew": "blown", "drew": "drawn", "flew": "flown",
    "grew": "grown", "overtook": "overtaken", "overthrew": "overthrown", "undertook": "undertaken",
    "sang": "sung", "swore": "sworn", "shot": "shot", "hit": "hit", "cut": "cut", "put": "put",
    "set": "set", "led": "led", "held": "held", "found": "found", "built": "built", "sent": "sent",
    "made": "made", "paid": "paid", "sold": "sold", "told": "told", "bought": "bought", "brought": "brought",
    "caught": "caught", "taught": "taught", "fought": "fought", "sought": "sought", "won": "won",
    "lost": "lost", "left": "left", "met": "met", "kept": "kept", "struck": "struck", "hung": "hung",
    "spent": "spent", "lent": "lent", "read": "read", "heard": "heard", "fed": "fed", "bred": "bred",
    "shut": "shut", "quit": "quit", "beheld": "beheld", "bound": "bound", "ground": "ground",
    "wound": "wound", "sank": "sunk", "rang": "rung", "forbade": "forbidden",
}
