from events import upcoming


def agenda(items, now):
    return [title for title, _ in upcoming(items, now)]
