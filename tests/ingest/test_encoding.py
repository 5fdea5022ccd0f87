"""decode_text: the encodings people really save files in, and refusing what is not text."""

from __future__ import annotations

import codecs
import random

import pytest

from agentrag.errors import LoadError
from agentrag.ingest.encoding import decode_text

ZH = "机器学习是人工智能的一个分支，它研究计算机怎样模拟人类的学习行为。\n深度学习（Deep Learning）在2023年取得了突破。"
EN = "Hello world, this is plain text.\nSecond line."


def test_gbk_chinese_is_decoded() -> None:
    assert decode_text(ZH.encode("gbk"), "notes.txt") == ZH


def test_gb18030_only_characters_are_decoded() -> None:
    # "𠀀" (CJK Extension B) and "€" need GB18030's four-byte and extended ranges, beyond GBK.
    text = ZH + "生僻字𠀀与欧元符号€。"
    assert decode_text(text.encode("gb18030"), "rare.txt") == text


def test_rare_gbk_characters_in_names_still_count_as_chinese() -> None:
    text = "朱镕基、王堃、李喆和张昇都是人名，这些字不在常用字表里，但整篇文章仍然是正常的中文。"
    assert decode_text(text.encode("gbk"), "names.txt") == text


@pytest.mark.parametrize(
    ("encoded", "label"),
    [
        (codecs.BOM_UTF8 + ZH.encode("utf-8"), "utf-8 with BOM"),
        (ZH.encode("utf-16"), "utf-16 with BOM (native order)"),
        (codecs.BOM_UTF16_LE + ZH.encode("utf-16-le"), "utf-16 LE with BOM"),
        (codecs.BOM_UTF16_BE + ZH.encode("utf-16-be"), "utf-16 BE with BOM"),
        (codecs.BOM_UTF32_LE + ZH.encode("utf-32-le"), "utf-32 LE with BOM"),
        (codecs.BOM_UTF32_BE + ZH.encode("utf-32-be"), "utf-32 BE with BOM"),
    ],
)
def test_byte_order_marks_decide_and_are_removed(encoded: bytes, label: str) -> None:
    text = decode_text(encoded, "bom.txt")
    assert text == ZH, label
    assert not text.startswith("\ufeff")


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_bom_is_recognised_by_its_nul_bytes(codec: str) -> None:
    assert decode_text(EN.encode(codec), "nobom.txt") == EN
    mixed = "中文文本 with some ASCII 123\n" * 5
    assert decode_text(mixed.encode(codec), "nobom.txt") == mixed


def test_newlines_are_normalised() -> None:
    assert decode_text(b"a\r\nb\rc\nd", "crlf.txt") == "a\nb\nc\nd"
    assert decode_text("第一行\r\n第二行".encode("gbk"), "crlf.txt") == "第一行\n第二行"


def test_stray_control_characters_are_dropped() -> None:
    # A DOS end-of-file marker and a form feed are text-file debris, not content.
    assert decode_text(b"page one\x0cpage two\r\n\x1a", "old.txt") == "page one\npage two\n"


def test_windows_1252_text_is_read_as_such() -> None:
    text = "The committee’s report “On Café Culture” – a naïve résumé by Müller."  # curly quotes: 0x92-0x94
    assert decode_text(text.encode("cp1252"), "latin.txt") == text
    assert decode_text("naïve Müller".encode("cp1252"), "short.txt") == "naïve Müller"


def test_big5_is_not_mistaken_for_gbk() -> None:
    text = "機器學習是人工智慧的一個分支，它研究電腦怎樣模擬人類的學習行為。" * 2
    assert decode_text(text.encode("big5"), "tw.txt") == text


def test_korean_euc_kr_is_not_mistaken_for_chinese() -> None:
    # EUC-KR uses the same byte ranges as GB2312 and would decode to fluent-looking Chinese nonsense.
    text = "기계 학습은 인공 지능의 한 분야입니다. 데이터에서 학습합니다. " * 3
    assert decode_text(text.encode("euc-kr"), "ko.txt") == text


def test_declared_encoding_is_used_when_the_bytes_fit_it() -> None:
    assert decode_text(ZH.encode("gbk"), "page.html", declared="gb2312") == ZH
    # A wrong declaration (utf-8 for GBK bytes) is ignored, not trusted into mojibake.
    assert decode_text(ZH.encode("gbk"), "page.html", declared="utf-8") == ZH


def test_png_is_binary() -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    with pytest.raises(LoadError) as info:
        decode_text(png, "docs/picture.txt")
    assert str(info.value) == "docs/picture.txt: binary file (not text)"


@pytest.mark.parametrize("seed", range(10))
def test_random_bytes_are_binary(seed: int) -> None:
    rnd = random.Random(seed)
    data = bytes(rnd.randrange(256) for _ in range(4096))
    with pytest.raises(LoadError, match=r"binary file \(not text\)"):
        decode_text(data, "noise.txt")


@pytest.mark.parametrize("seed", range(20))
def test_random_gbk_byte_pairs_are_not_accepted_as_chinese(seed: int) -> None:
    # Every pair is a valid GBK code, so strict GB18030 decoding succeeds: only the "reads like Chinese"
    # check stands between this noise and the index.
    rnd = random.Random(seed)
    trail = [b for b in range(0x40, 0xFF) if b != 0x7F]
    data = b"".join(bytes([rnd.randrange(0x81, 0xFF), rnd.choice(trail)]) for _ in range(300))
    data.decode("gb18030")  # the trap is real
    with pytest.raises(LoadError, match="unknown text encoding"):
        decode_text(data, "noise.txt")


def test_invalid_bytes_after_a_bom_are_reported() -> None:
    with pytest.raises(LoadError, match="invalid UTF-8 text after its byte-order mark"):
        decode_text(codecs.BOM_UTF8 + b"ok \xff\xfe broken", "bad.txt")


def test_utf8_cut_mid_character_stays_utf8() -> None:
    # A file truncated at a byte limit ends inside a character; the rest must not become mojibake.
    text = ZH * 10
    decoded = decode_text(text.encode("utf-8")[:-1], "cut.txt")
    assert decoded == text[:-1] + "\ufffd"


def test_utf8_with_one_stray_latin1_byte_stays_utf8() -> None:
    data = "“Quoted” text. ".encode() + EN.encode() * 20 + b" caf\xe9"
    decoded = decode_text(data, "mixed.txt")
    assert decoded.startswith("“Quoted” text. Hello world")
    assert decoded.endswith(" caf\ufffd")


def test_gbk_with_few_chinese_characters_is_not_taken_for_broken_utf8() -> None:
    text = "# settings file\n" + "timeout = 30\nretries = 5\n" * 40 + "# 超时时间，单位为秒\n"
    assert decode_text(text.encode("gbk"), "settings.txt") == text
