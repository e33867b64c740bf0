"""SmolLM2's tokenizer: a byte-level BPE (GPT-2's scheme) built from the GGUF's tokens and merges.

Text is split into pieces (each digit alone, then GPT-2's pattern: words with their leading space,
runs of punctuation, runs of whitespace); each piece's UTF-8 bytes are spelled as printable
characters (GPT-2's byte-to-unicode table) and merged pairwise, lowest merge rank first, until no
merge applies. Control tokens such as <|im_start|> are matched whole before any of that.
"""
import re

# GPT-2's pre-tokenizer with \p{L} (a letter) written for Python's re: [^\W\d_] is a word character
# that is neither a digit nor "_". Digits were already split off one by one (SmolLM2's first rule).
LETTERS = r"[^\W\d_]"
PIECE = re.compile(rf"\d|'s|'t|'re|'ve|'m|'ll|'d| ?{LETTERS}+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+")

CHAT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"  # the GGUF's template


def bytes_to_unicode():
    """GPT-2's table: each byte as a printable character (bytes that print stay themselves)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


class Tokenizer:
    def __init__(self, tokens, merges, special, bos, eos):
        self.tokens = list(tokens)
        self.ids = {t: i for i, t in enumerate(self.tokens)}
        self.ranks = {tuple(m.split(" ")): r for r, m in enumerate(merges)}
        self.special = {self.tokens[i]: i for i in special}
        self.bos, self.eos = bos, eos
        self.byte_char = bytes_to_unicode()
        self.char_byte = {c: b for b, c in self.byte_char.items()}
        self.split_special = re.compile("(" + "|".join(map(re.escape, self.special)) + ")")
        self.seen = {}  # piece -> ids: words repeat, and merging is the slow part

    def bpe(self, piece):
        """Token ids of one pre-tokenized piece: merge the lowest-ranked adjacent pair until none is known."""
        if piece not in self.seen:
            self.seen[piece] = self.merge(piece)
        return self.seen[piece]

    def merge(self, piece):
        parts = [self.byte_char[b] for b in piece.encode("utf-8")]
        while len(parts) > 1:
            pairs = [(self.ranks.get(pair, float("inf")), i) for i, pair in enumerate(zip(parts, parts[1:]))]
            rank, i = min(pairs)
            if rank == float("inf"):
                break
            parts[i:i + 2] = [parts[i] + parts[i + 1]]
        return [self.ids[p] for p in parts]

    def encode(self, text):
        """Token ids of `text`; control tokens written out (<|im_end|>) become their single ids."""
        ids = []
        for chunk in self.split_special.split(text):
            if chunk in self.special:
                ids.append(self.special[chunk])
            else:
                for piece in PIECE.findall(chunk):
                    ids.extend(self.bpe(piece))
        return ids

    def decode(self, ids):
        data = bytes(self.char_byte[c] for i in ids for c in self.tokens[i])
        return data.decode("utf-8", errors="replace")

    def chat(self, messages, add_generation_prompt=True):
        """Token ids of a conversation in SmolLM2's ChatML template (a default system turn first)."""
        if not messages or messages[0]["role"] != "system":
            messages = [{"role": "system", "content": CHAT_SYSTEM}, *messages]
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
        if add_generation_prompt:
            text += "<|im_start|>assistant\n"
        return self.encode(text)
