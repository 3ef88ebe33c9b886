"""Bounded records for the simulated hardware, so a simulated board can run for days.

A History keeps the last `limit` entries it was given (newest last) and `count`, how many
it was given in all: its heap stays flat however long the session. It answers len(),
indexing (negative and slices too), iteration, `==` against a list and list() the way
the list it replaces did, over the entries it kept.
"""


class History:
    def __init__(self, limit):
        self.limit = limit
        self.count = 0  # entries ever appended, dropped ones included
        self._items = []

    def append(self, item):
        self.count += 1
        items = self._items
        if len(items) >= self.limit:
            items.pop(0)
        items.append(item)

    def clear(self):
        self.count = 0
        self._items = []

    def __len__(self):
        return len(self._items)

    def __getitem__(self, index):
        return self._items[index]

    def __iter__(self):
        return iter(self._items)

    def __eq__(self, other):
        if isinstance(other, History):
            other = other._items
        return self._items == other

    def __ne__(self, other):
        return not self.__eq__(other)

    def __repr__(self):
        return "History(%r, count=%d)" % (self._items, self.count)
