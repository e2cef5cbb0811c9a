from text import slugify


def url_for(section, title):
    return f"/{slugify(section)}/{slugify(title)}/"
