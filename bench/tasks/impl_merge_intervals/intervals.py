def merge(intervals):
    """Merge overlapping (start, end) pairs; the result is sorted by start."""
    raise NotImplementedError
