def to_camel(name):
    """snake_case -> camelCase"""
    return "".join(part.capitalize() for part in name.split("_"))


def to_snake(name):
    """camelCase -> snake_case"""
    out = ""
    for c in name:
        out += "_" + c.lower() if c.isupper() else c
    return out
