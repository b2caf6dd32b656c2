"""BERT's uncased WordPiece tokenization in pure Python, for the text where it provably equals ``tokenizers``.

Why: loading the Rust tokenizer from ``tokenizer.json`` costs ~40 ms of CPU (plus its import) in every
``nous search`` process, several times the tokenization of a query. This reads ``vocab.txt`` (~10 ms) and
applies the same steps as the model's ``tokenizer.json`` (BertNormalizer: drop NUL, U+FFFD and control/format/
private-use characters, whitespace to spaces, spaces around CJK ideographs, NFD without combining marks,
per-character lowercase; BertPreTokenizer: split on whitespace and isolate punctuation; greedy longest-match
WordPiece with ``##`` continuations, ``[UNK]`` for a word that does not split or is over 100 characters).

Exactness is bounded by Unicode versions: ``tokenizers`` classifies characters with older Unicode tables than
Python's ``unicodedata``, so ~760 characters assigned since then (all at U+0600 or above: new Arabic, Indic,
Mongolian... marks and letters) come out differently, and CJK ideographs need spacing this does not do.
:meth:`WordPiece.encode` therefore answers only for text whose characters all lie in :data:`FAST_RANGES`
(below U+0600: Latin, Greek, Cyrillic, Armenian, Hebrew, IPA; U+2000-U+2BFF: dashes, quotes, arrows, math, box
drawing, symbols; emoji), each codepoint of which is checked against ``tokenizers`` in
``tests/embed/test_light.py``, and returns None otherwise, for the caller to use ``tokenizers``.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

__all__ = ["FAST_RANGES", "WordPiece"]

FAST_RANGES = ((0x0000, 0x0600), (0x2000, 0x2C00), (0x1F000, 0x1FB00))
"""[start, end) codepoint ranges tokenized here; text with any other character returns None."""
CLS, SEP, UNK = "[CLS]", "[SEP]", "[UNK]"
MAX_WORD_CHARS = 100
_DROPPED = frozenset(("Cc", "Cf", "Co"))  # control, format, private use (unassigned Cn is kept, as tokenizers does)


class WordPiece:
    """The vocabulary and the tokenization steps of ``tokenizer.json`` (uncased BERT)."""

    def __init__(self, vocab: dict[str, int]) -> None:
        self.vocab = vocab
        self.cls, self.sep, self.unk = vocab[CLS], vocab[SEP], vocab[UNK]

    @classmethod
    def from_file(cls, path: Path) -> WordPiece:
        """``vocab.txt``: one token per line, its id the line number."""
        lines = path.read_text(encoding="utf-8").split("\n")
        return cls({token: i for i, token in enumerate(lines) if token})

    def encode(self, text: str, max_tokens: int) -> list[int] | None:
        """``[CLS] ids [SEP]``, at most ``max_tokens`` long (truncated as tokenizers' LongestFirst does for one
        text), or None when ``text`` has a character outside :data:`FAST_RANGES`."""
        if not all(_fast(ord(ch)) for ch in text):
            return None
        room = max_tokens - 2
        ids: list[int] = []
        for word in _words(_normalize(text)):
            ids.extend(self._pieces(word))
            if len(ids) >= room:
                break
        return [self.cls, *ids[:room], self.sep]

    def _pieces(self, word: str) -> list[int]:
        if len(word) > MAX_WORD_CHARS:
            return [self.unk]
        ids, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self.vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            else:
                return [self.unk]
            ids.append(found)
            start = end
        return ids


def _fast(cp: int) -> bool:
    return cp < 0x0600 or any(start <= cp < end for start, end in FAST_RANGES[1:])


def _normalize(text: str) -> str:
    """BertNormalizer (clean text, strip accents, lowercase; no CJK ideograph lies in :data:`FAST_RANGES`)."""
    kept = []
    for ch in text:
        if ch == "\x00" or ch == "\ufffd" or (ch not in "\t\n\r" and unicodedata.category(ch) in _DROPPED):
            continue
        kept.append(" " if ch.isspace() else ch)
    decomposed = unicodedata.normalize("NFD", "".join(kept))
    return "".join(ch.lower() for ch in decomposed if unicodedata.category(ch) != "Mn")  # per character, as Rust


def _is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    return 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126 or \
        unicodedata.category(ch).startswith("P")  # fmt: skip


def _words(text: str) -> list[str]:
    """BertPreTokenizer: whitespace separates, each punctuation character is a word of its own."""
    words: list[str] = []
    current: list[str] = []
    for ch in text:
        if ch.isspace() or _is_punctuation(ch):
            if current:
                words.append("".join(current))
                current = []
            if not ch.isspace():
                words.append(ch)
        else:
            current.append(ch)
    if current:
        words.append("".join(current))
    return words
