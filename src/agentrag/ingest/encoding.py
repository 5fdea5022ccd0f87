"""Bytes to text for every text-based loader: the encodings Chinese and English users actually save files in.

Order matters. A BOM is proof, so it wins. Valid UTF-8 is almost never an accident, so it comes next. UTF-16
without a BOM shows itself by NUL bytes on one side of each pair. Anything else with NULs or many control bytes
is binary and is refused before the permissive decoders run, because GB18030 accepts most byte strings and
charset-normalizer always has a guess. UTF-8 with a handful of broken bytes (a truncated file) stays UTF-8.
GB18030 (a superset of GBK and GB2312) is only accepted when the result reads like Chinese text;
charset-normalizer gets the rest (Big5, Shift-JIS, Windows-1252...).
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from typing import TYPE_CHECKING

from agentrag.errors import LoadError

if TYPE_CHECKING:
    from charset_normalizer import CharsetMatches

_SAMPLE = 8192
_BOMS: tuple[tuple[bytes, str], ...] = (
    # UTF-32 LE first: its BOM starts with the UTF-16 LE BOM.
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Control bytes that do not occur in text files (tab, LF, VT, FF, CR and ESC do).
_CONTROL_BYTES = bytes(sorted(set(range(32)) - {9, 10, 11, 12, 13, 27})) + b"\x7f"
# Control characters removed from decoded text; VT and FF become line breaks.
_CONTROL_CHARS = re.compile("[\x00-\x08\x0e-\x1f\x7f]")
_CONTROL_CHAR_BYTES = bytes([*range(0x09), *range(0x0E, 0x20), 0x7F])
# Declared names that browsers and editors treat as wider encodings (WHATWG encoding standard).
_ALIASES = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "gb_2312-80": "gb18030",
    "cp936": "gb18030",
    "iso-8859-1": "cp1252",
    "latin-1": "cp1252",
    "latin1": "cp1252",
    "ascii": "cp1252",
    "us-ascii": "cp1252",
    "big5": "big5hkscs",
    "shift_jis": "cp932",
    "sjis": "cp932",
}


def _control_count(sample: bytes) -> int:
    return len(sample) - len(sample.translate(None, _CONTROL_BYTES))


def _too_many_controls(sample: bytes) -> bool:
    """More than ~2% control bytes: text editors do not produce that, binary formats do."""
    return _control_count(sample) > len(sample) // 50 + 1


def _is_binary(sample: bytes) -> bool:
    return b"\x00" in sample or _too_many_controls(sample)


def _odd_ratio(text: str) -> float:
    """Share of characters no text file should contain: controls, private use, unassigned, U+FFFD."""
    if not text:
        return 0.0
    odd = 0
    for ch in text:
        if ch.isprintable():
            odd += ch == "\ufffd"
        elif ch not in "\t\n\r\f\v\x1b" and unicodedata.category(ch) in ("Cc", "Co", "Cn", "Cs"):
            odd += 1
    return odd / len(text)


def _utf16_by_nuls(data: bytes) -> str | None:
    """Decode BOM-less UTF-16 when NUL bytes sit on one side of the byte pairs only (ASCII in UTF-16)."""
    sample = data[: _SAMPLE - _SAMPLE % 2]
    pairs = len(sample) // 2
    if pairs < 2:
        return None
    even = sample[0 : 2 * pairs : 2].count(0)
    odd = sample[1 : 2 * pairs : 2].count(0)
    if odd >= max(1, pairs // 50) and even * 20 <= odd:
        codec = "utf-16-le"
    elif even >= max(1, pairs // 50) and odd * 20 <= even:
        codec = "utf-16-be"
    else:
        return None
    if len(data) % 2:
        return None
    try:
        text = data.decode(codec)
    except UnicodeDecodeError:
        return None
    return text if _odd_ratio(text[:4000]) <= 0.01 else None


def _mostly_utf8(data: bytes) -> str | None:
    """UTF-8 with a few broken sequences (a file cut mid-character, one pasted Latin-1 byte), else None.

    Accepted when the broken sequences are at most 0.2% of the text and well-formed multi-byte characters
    outnumber them: GBK or Latin-1 files fail at nearly every non-ASCII character and go on to their own
    decoders. Broken bytes become U+FFFD, so the rest of the file is not turned into mojibake.
    """
    text = data.decode("utf-8", errors="replace")
    bad = text.count("\ufffd") - data.count(b"\xef\xbf\xbd")
    if bad <= 0 or bad > max(2, len(text) // 500):
        return None
    non_ascii = len(text) - len(text.encode("ascii", errors="ignore"))
    return text if non_ascii - bad >= 2 * bad else None


def _looks_chinese(text: str) -> bool:
    """True when a GB18030 decoding reads like Chinese text rather than mojibake.

    GB18030 maps almost every byte pair to some character, so a successful decode proves little. Real
    Chinese text is overwhelmingly made of the GB2312 repertoire (the ~7,000 common characters); Latin-1,
    Big5 or random bytes decoded as GB18030 land outside it for most pairs.
    """
    sample = text[:4000]
    if _odd_ratio(sample) > 0.01:
        return False
    wide = "".join(ch for ch in sample if ord(ch) > 0x7F)
    if not wide:
        return True
    common = len(wide.encode("gb2312", errors="ignore")) // 2
    return common >= 0.85 * len(wide)


_EAST_ASIAN_OTHERS = frozenset(
    {
        "cp949",
        "euc_kr",
        "johab",
        "iso2022_kr",
        "euc_jp",
        "euc_jis_2004",
        "euc_jisx0213",
        "cp932",
        "shift_jis",
        "shift_jis_2004",
        "shift_jisx0213",
        "iso2022_jp",
    }
)


def _korean_or_japanese(matches: CharsetMatches) -> str | None:
    """EUC-KR and EUC-JP use the same byte ranges as GB2312 and decode to fluent-looking mojibake.

    charset-normalizer is unreliable on short Chinese text, so it only overrules GB18030 when it clearly
    prefers a Korean or Japanese encoding (GB18030 missing from its candidates or far messier).
    """
    best = matches.best()
    if best is None or best.encoding not in _EAST_ASIAN_OTHERS:
        return None
    gb = next((m for m in matches if m.encoding == "gb18030"), None)
    if gb is not None and gb.chaos <= best.chaos + 0.05:
        return None
    return str(best)


def _finish(text: str, utf8: bytes | None = None) -> str:
    """One newline convention and no stray control characters, whatever the source.

    `utf8` is the text's own UTF-8 bytes when it has them: scanning bytes for control characters is twice
    as fast as a regex over the string, which matters for multi-megabyte corpus files.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x0b" in text or "\x0c" in text:
        text = text.replace("\x0b", "\n").replace("\x0c", "\n")
    if utf8 is not None:
        if len(utf8.translate(None, _CONTROL_CHAR_BYTES)) != len(utf8):
            text = _CONTROL_CHARS.sub("", text)
    elif _CONTROL_CHARS.search(text):
        text = _CONTROL_CHARS.sub("", text)
    return text


def _canonical(declared: str) -> str | None:
    name = declared.strip().strip("\"'").lower()
    name = _ALIASES.get(name, name)
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def decode_text(data: bytes, path: str, declared: str | None = None) -> str:
    """Decode file bytes to text with "\\n" newlines, or raise LoadError saying why it is not text.

    `declared` is an encoding the file itself names (an HTML meta charset); it is tried strictly after the
    BOM and ignored if the bytes do not decode with it.
    """
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return _finish(data[len(bom) :].decode(codec))
            except UnicodeDecodeError as exc:
                reason = f"invalid {codec.upper()} text after its byte-order mark ({exc.reason})"
                raise LoadError(path, reason) from None

    sample = data[:_SAMPLE]
    if declared:
        codec_name = _canonical(declared)
        if codec_name is not None and not _is_binary(sample):
            try:
                return _finish(data.decode(codec_name))
            except UnicodeDecodeError:
                pass

    if not _is_binary(sample):
        try:
            return _finish(data.decode("utf-8"), utf8=data)
        except UnicodeDecodeError:
            pass

    if b"\x00" in sample:
        utf16 = _utf16_by_nuls(data)
        if utf16 is not None:
            return _finish(utf16)

    if _is_binary(sample):
        raise LoadError(path, "binary file (not text)")

    mostly_utf8 = _mostly_utf8(data)
    if mostly_utf8 is not None:
        return _finish(mostly_utf8)

    from charset_normalizer import from_bytes  # imported late: only files that are neither UTF nor binary get here

    try:
        gb = data.decode("gb18030")
    except UnicodeDecodeError:
        pass
    else:
        if _looks_chinese(gb):
            other = _korean_or_japanese(from_bytes(data))
            return _finish(other if other is not None else gb)

    matches = from_bytes(data)
    best = matches.best()
    if best is not None:
        # Ties between single-byte code pages are common (café reads the same in cp1250 and cp1252);
        # Windows-1252 is what English Windows editors write, so it wins a tie.
        for match in matches:
            if match.encoding == "cp1252" and match.chaos <= best.chaos + 0.01:
                if match.coherence >= best.coherence - 0.01:
                    best = match
                break
        guessed = str(best)
        if _odd_ratio(guessed[:4000]) <= 0.01:
            return _finish(guessed)
    raise LoadError(path, "unknown text encoding (not UTF-8, UTF-16 or GB18030, and no confident guess)")
