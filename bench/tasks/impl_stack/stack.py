class Stack:
    def __init__(self):
        self.items = []

    def push(self, item):
        self.items.append(item)

    def pop(self):
        """Remove and return the top item; IndexError when empty."""
        raise NotImplementedError

    def peek(self):
        """The top item without removing it; None when empty."""
        raise NotImplementedError

    def __len__(self):
        return len(self.items)
