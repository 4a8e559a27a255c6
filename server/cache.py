"""A small LRU of response bytes, bounded by total size: the same program on the same inputs (a class
running one example) is answered without a worker."""
from __future__ import annotations

from collections import OrderedDict


class ResponseCache:
    def __init__(self, max_bytes: int = 32 << 20, max_item_bytes: int = 1 << 20):
        self.max_bytes, self.max_item_bytes = max_bytes, max_item_bytes
        self._items: OrderedDict[bytes, bytes] = OrderedDict()
        self._size = 0
        self.hits = self.misses = 0

    def get(self, key: bytes) -> bytes | None:
        value = self._items.get(key)
        if value is None:
            self.misses += 1
            return None
        self._items.move_to_end(key)
        self.hits += 1
        return value

    def stats(self) -> dict[str, int]:
        return {"entries": len(self._items), "hits": self.hits, "misses": self.misses}

    def put(self, key: bytes, value: bytes) -> None:
        if len(value) > self.max_item_bytes or key in self._items:
            return
        self._items[key] = value
        self._size += len(key) + len(value)
        while self._size > self.max_bytes:
            k, v = self._items.popitem(last=False)
            self._size -= len(k) + len(v)
