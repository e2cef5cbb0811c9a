from formatting import row


def table(rows):
    return '\n'.join(row(name, value) for name, value in rows)
