"""Rebuild the two text corpora of notebook 08 from their sources on a Debian 12 machine.

    apt-get download jargon-text && dpkg-deb -x jargon-text_*.deb jargon
    python data/corpora/make_corpora.py --jargon jargon/usr/share/doc/jargon-text/jargon.txt.gz \
        --stdlib "$(python3.11 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')"

The committed .txt files, not this script, are what the course loads. SOURCES.md says where
every character came from and under which licence. Both corpora are plain ASCII.
"""
import argparse
import gzip
import re
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Sections of The Jargon File 4.4.7 that are running prose (1-based line numbers in jargon.txt,
# end exclusive): chapters 1-2, chapters 4-12 (chapter 3 is a list of revisions), appendices A-C (to the end).
JARGON_SECTIONS = [(275, 466), (801, 2115), (40101, 41631)]

# Whole modules of the Python 3.11 standard library, concatenated in this order.
STDLIB_FILES = ["argparse.py", "textwrap.py", "glob.py", "fnmatch.py"]

PUNCTUATION = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2014": "--",
               "\u2013": "-", "\u2026": "...", "\u2022": "*", "\u00d7": "x", "\u00a0": " "}


def ascii_only(text):
    """Typographic punctuation to ASCII, accents dropped (NFKD), anything left over removed."""
    text = "".join(PUNCTUATION.get(ch, ch) for ch in text)
    text = unicodedata.normalize("NFKD", text)
    return text.encode("ascii", "ignore").decode("ascii")


def prose(jargon_gz):
    lines = gzip.open(jargon_gz, "rt", encoding="utf-8").read().split("\n")
    paragraphs = []
    for start, end in JARGON_SECTIONS:
        block = "\n".join(lines[start - 1:end - 1])
        for para in re.split(r"\n\s*\n", block):
            if any("\u2500" <= ch <= "\u257f" for ch in para):  # a box-drawn table: not prose
                continue
            words = " ".join(para.split())
            if words and words != "Table of Contents":
                paragraphs.append(ascii_only(words))
    return "\n\n".join(paragraphs) + "\n"


def code(stdlib):
    parts = [(Path(stdlib) / name).read_text(encoding="utf-8") for name in STDLIB_FILES]
    text = "".join(parts).expandtabs(8)
    assert text.isascii()
    return text


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jargon", required=True, help="path to jargon.txt.gz from Debian's jargon-text")
    ap.add_argument("--stdlib", required=True, help="the Python 3.11 standard library folder")
    args = ap.parse_args()
    for name, text in (("prose_jargon.txt", prose(args.jargon)), ("code_stdlib.txt", code(args.stdlib))):
        (HERE / name).write_text(text, encoding="ascii")
        print(f"{name}: {len(text):,} characters")
