"""Linguistics shared by the scorer, the detector and the generators: the bottom layer of veridic.

* :mod:`veridic.ling.lexical` — content words and lexical overlap (no parser). Public: the scorers' ``describe()``
  names it.
* :mod:`veridic.ling._lexicon` — antonyms, converses, reversals, synonyms, symmetric predicates.
* :mod:`veridic.ling._align` — aligning a parsed sentence's entities, terms and relations with its evidence.
* :mod:`veridic.ling._roles` — predicate frames (who did what to whom) and the structural errors between two parses.

Nothing here imports a model, a scorer or a capability; the parse-based modules receive spaCy objects.

>>> from veridic.ling._lexicon import ANTONYMS
>>> ANTONYMS["won"]
'lost'
"""
