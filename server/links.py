"""The public link format: `/#v1=` + base64url (no padding) of raw-deflate (zlib wbits -15) of the
UTF-8 JSON state. The browser writes and reads the same format with CompressionStream."""
from __future__ import annotations

import base64
import json
import zlib


def encode_state(state: dict) -> str:
    raw = json.dumps(state, separators=(",", ":"), ensure_ascii=False).encode()
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = compressor.compress(raw) + compressor.flush()
    return base64.urlsafe_b64encode(packed).decode().rstrip("=")


def decode_state(fragment: str, max_bytes: int = 1 << 20) -> dict:
    """The state in a `v1=` fragment. Raises ValueError on anything malformed."""
    padded = fragment + "=" * (-len(fragment) % 4)
    try:
        packed = base64.urlsafe_b64decode(padded)
        d = zlib.decompressobj(-15)
        raw = d.decompress(packed, max_bytes)
        if d.unconsumed_tail:
            raise ValueError("state too large")
        state = json.loads(raw.decode())
    except (ValueError, zlib.error, UnicodeDecodeError) as e:
        raise ValueError(f"not a rasplay v1 link: {e}") from None
    if not isinstance(state, dict) or not isinstance(state.get("source"), str):
        raise ValueError("not a rasplay v1 link: the state needs a source")
    return state


def link_fragment(state: dict) -> str:
    return "v1=" + encode_state(state)
