#!/usr/bin/env python3
"""Writes the seed corpus: one valid frame (or stream of frames) per file under Corpus/wire, and
one import line per file under Corpus/import-line. Run from anywhere; the files are committed.
The predicate-format seeds (Corpus/predicate-format) are format strings written by hand."""
import os, struct, uuid

here = os.path.dirname(os.path.abspath(__file__))
STORE = uuid.UUID("6A0A7E2C-4C2B-4E43-9C55-0D1B2A3C4D5E").bytes

def str16(s): b = s.encode(); return struct.pack(">H", len(b)) + b
def varint(n):
    out = b""
    while True:
        byte = n & 0x7F; n >>= 7
        if n: out += bytes([byte | 0x80])
        else: return out + bytes([byte])
def keys(ks):
    out, prev = varint(len(ks)), 0
    for k in ks: out += varint(k - prev); prev = k
    return out
VERSION = 3  # WireFormat.protocolVersion
INSTANCE = 0x1234_5678_9ABC_DEF0
def frame(t, payload): body = bytes([VERSION, t]) + payload; return struct.pack(">I", len(body)) + body

NO_BELL = bytes([0]) + struct.pack(">QQ", 0, 0)
hello = frame(0x01, STORE + struct.pack(">IQq", 4242, INSTANCE, 17) + bytes([VERSION]) + str16("viewer") + NO_BELL)
frames = {
    "hello": hello,
    "hello-other-store": frame(0x01, uuid.uuid4().bytes + struct.pack(">IQq", 1, 2, 0) + bytes([VERSION]) + str16("x") + NO_BELL),
    "hello-bell": frame(0x01, STORE + struct.pack(">IQq", 4243, INSTANCE + 1, 0) + bytes([VERSION]) + str16("hears") + bytes([3]) + struct.pack(">QQ", 2049, 131074)),
    "hello-version-9": frame(0x01, STORE + struct.pack(">IQq", 1, 2, 0) + bytes([9]) + str16("old") + NO_BELL),
    "welcome": frame(0x02, struct.pack(">II", 99, 3)),
    "error": frame(0x03, struct.pack(">H", 2) + str16("this hub serves another store")),
    "did-save": frame(0x10, STORE + struct.pack(">qIQ", 18, 4242, INSTANCE) + str16("importer") + struct.pack(">H", 2)
                      + bytes([4]) + b"Item" + keys([1, 2, 3, 10]) + keys([5]) + keys([])
                      + bytes([6]) + b"Author" + keys([]) + keys([7, 300, 70000]) + keys([9])),
    "did-save-no-author": frame(0x10, STORE + struct.pack(">qIQ", 19, 1, 3) + str16("") + struct.pack(">H", 1)
                                + bytes([1]) + b"E" + keys([1]) + keys([]) + keys([])),
    "token-only": frame(0x11, STORE + struct.pack(">qIQ", 20, 4242, INSTANCE)),
    "ping": frame(0x20, struct.pack(">Q", 7)),
    "pong": frame(0x21, struct.pack(">Q", 7)),
    "peers-request": frame(0x30, b""),
    "peers": frame(0x31, struct.pack(">H", 2) + struct.pack(">IQqq", 10, 5, 1, 5) + str16("a") + struct.pack(">IQqq", 11, INSTANCE, 2, 5) + str16("importer")),
}
frames["conversation"] = hello + frames["did-save"] + frames["ping"] + frames["token-only"] + frames["peers-request"]
for name, data in frames.items():
    with open(os.path.join(here, "Corpus", "wire", name + ".bin"), "wb") as f: f.write(data)

lines = {
    "minimal": '{"uid":"a-1"}',
    "every-type": '{"uid":"a-2","small":12,"medium":-70000,"large":9007199254740993,"ratio":0.25,"flag":true,'
                  '"when":"2026-11-22T10:00:00Z","blob":"aGVsbG8=","id":"6A0A7E2C-4C2B-4E43-9C55-0D1B2A3C4D5E",'
                  '"link":"https://example.com/x","amount":"12.50","note":"hi"}',
    "dates": '{"uid":"a-3","when":1764000000.5}',
    "nulls": '{"uid":"a-4","small":null,"note":null}',
    "wrong-type": '{"uid":"a-5","flag":"yes"}',
    "relationship": '{"uid":"a-6","parent":"a-1"}',
    "unknown-field": '{"uid":"a-7","colour":"red"}',
    "not-object": '[1,2,3]',
    "no-key": '{"note":"no uid"}',
    "unicode": '{"uid":"\\u00e9t\\u00e9 \\ud83c\\udf1e","note":"caf\\u00e9"}',
    "out-of-range": '{"uid":"a-8","small":40000}',
    "fractional-date": '{"uid":"a-9","when":"2026-11-22T10:00:00.123Z"}',
}
for name, text in lines.items():
    with open(os.path.join(here, "Corpus", "import-line", name + ".json"), "w") as f: f.write(text)
